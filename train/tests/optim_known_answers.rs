//! Known answers for the optimizers: a few steps of [`Optimizer`] on small fixed tensors
//! with fixed gradients, compared with `torch.optim.SGD` and `torch.optim.AdamW` run in the
//! project's venv on the same numbers, and one AdamW step worked out by hand.
//!
//! Weight decay applies to variables of two or more dimensions only (convolution and linear
//! weights), so the reference puts those in a parameter group with the decay and the 1-D
//! ones in a group without.

use ninjazero_train::{Optimizer, OptimizerKind};
use serde_json::{json, Value};
use std::path::PathBuf;
use tch::{nn::VarStore, Device, Kind, Tensor};

/// The trainable variables: (name, shape); the name order is the optimizer's order.
const SHAPES: [(&str, &[i64]); 3] = [
    ("a_conv_weight", &[2, 1, 2, 2]),
    ("b_norm_bias", &[3]),
    ("c_linear_weight", &[3, 2]),
];
const STEPS: usize = 4;
/// A learning rate per step (a schedule changes it between steps).
const LRS: [f64; STEPS] = [0.05, 0.04, 0.03, 0.02];
const WEIGHT_DECAY: f64 = 0.1;

fn numel(shape: &[i64]) -> usize {
    shape.iter().product::<i64>() as usize
}

/// Initial values, away from 0 so that relative comparisons mean something.
fn initial(var: usize, len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let x = 0.5 + 0.4 * ((1.7 * i as f64 + var as f64).sin());
            (if (i + var) % 2 == 0 { x } else { -x }) as f32
        })
        .collect()
}

/// The gradient of variable `var` at step `step` (different every step, mixed signs and
/// sizes).
fn gradient(var: usize, step: usize, len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| (0.8 * (1.3 * i as f64 + 2.1 * var as f64 + 0.9 * step as f64).cos()) as f32)
        .collect()
}

fn values(t: &Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(t.to_kind(Kind::Float).flatten(0, -1)).unwrap()
}

fn python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv/bin/python");
    // CI runs scripts/setup.sh first: a missing venv is a broken setup, not a skip.
    assert!(
        python.exists(),
        "run scripts/setup.sh first: {} is missing",
        python.display()
    );
    python
}

/// The same steps in PyTorch: for every step, every parameter and optimizer state tensor
/// after it, by name (`param/NAME`, `SLOT/NAME`).
const REFERENCE: &str = r#"
import json, sys, torch
spec = json.load(sys.stdin)
params = {n: torch.tensor(v["values"], dtype=torch.float32).reshape(v["shape"]).requires_grad_()
          for n, v in spec["params"].items()}
decay = [p for p in params.values() if p.dim() >= 2]
no_decay = [p for p in params.values() if p.dim() < 2]
groups = [{"params": decay, "weight_decay": spec["weight_decay"]},
          {"params": no_decay, "weight_decay": 0.0}]
if spec["kind"] == "sgd":
    opt = torch.optim.SGD(groups, lr=spec["lrs"][0], momentum=spec["momentum"],
                          dampening=0.0, nesterov=False)
    slots = {"momentum": "momentum_buffer"}
else:
    opt = torch.optim.AdamW(groups, lr=spec["lrs"][0], betas=tuple(spec["betas"]), eps=1e-8)
    slots = {"exp_avg": "exp_avg", "exp_avg_sq": "exp_avg_sq"}
out = []
for lr, grads in zip(spec["lrs"], spec["grads"]):
    for g in opt.param_groups:
        g["lr"] = lr
    for n, p in params.items():
        p.grad = torch.tensor(grads[n], dtype=torch.float32).reshape(p.shape)
    opt.step()
    after = {}
    for n, p in params.items():
        after["param/" + n] = p.detach().flatten().tolist()
        for ours, theirs in slots.items():
            after[ours + "/" + n] = opt.state[p][theirs].flatten().tolist()
    out.append(after)
json.dump(out, sys.stdout)
"#;

fn torch_reference(kind: OptimizerKind) -> Vec<serde_json::Map<String, Value>> {
    let params: serde_json::Map<String, Value> = SHAPES
        .iter()
        .enumerate()
        .map(|(k, (name, shape))| {
            let v = json!({"shape": shape, "values": initial(k, numel(shape))});
            (name.to_string(), v)
        })
        .collect();
    let grads: Vec<Value> = (0..STEPS)
        .map(|step| {
            let m: serde_json::Map<String, Value> = SHAPES
                .iter()
                .enumerate()
                .map(|(k, (name, shape))| {
                    (name.to_string(), json!(gradient(k, step, numel(shape))))
                })
                .collect();
            Value::Object(m)
        })
        .collect();
    let mut spec = json!({
        "params": params,
        "grads": grads,
        "lrs": LRS,
        "weight_decay": WEIGHT_DECAY,
    });
    match kind {
        OptimizerKind::Sgd { momentum } => {
            spec["kind"] = json!("sgd");
            spec["momentum"] = json!(momentum);
        }
        OptimizerKind::AdamW { beta1, beta2 } => {
            spec["kind"] = json!("adamw");
            spec["betas"] = json!([beta1, beta2]);
        }
    }
    let mut child = std::process::Command::new(python())
        .args(["-c", REFERENCE])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(spec.to_string().as_bytes()).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the PyTorch reference failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let steps: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(steps.len(), STEPS);
    steps
        .into_iter()
        .map(|s| s.as_object().unwrap().clone())
        .collect()
}

/// A VarStore holding the variables of [`SHAPES`] and one that is not trainable.
fn var_store() -> VarStore {
    let vs = VarStore::new(Device::Cpu);
    for (k, (name, shape)) in SHAPES.iter().enumerate() {
        let t = Tensor::from_slice(&initial(k, numel(shape))).view(*shape);
        let _ = vs.root().var_copy(name, &t);
    }
    // Like batch norm's running statistics: no gradient, no optimizer state.
    let _ = vs.root().zeros_no_train("running_mean", &[3]);
    vs
}

/// |ours - theirs| within 1e-6 of the tensor's scale (its largest magnitude), so that
/// elements near 0 are not held to a tighter bound than float32 rounding allows.
fn assert_close(what: &str, ours: &[f32], theirs: &Value) {
    let theirs: Vec<f64> = theirs
        .as_array()
        .unwrap_or_else(|| panic!("no {what} in the reference"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(ours.len(), theirs.len(), "{what}");
    let scale = theirs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(scale > 0.0, "{what} is all zeros in the reference");
    for (i, (&a, &b)) in ours.iter().zip(&theirs).enumerate() {
        let diff = (f64::from(a) - b).abs();
        assert!(
            diff <= 1e-6 * scale,
            "{what}[{i}]: ours {a}, torch {b} (difference {diff:e}, scale {scale})"
        );
    }
}

fn compare_with_torch(kind: OptimizerKind, slots: &[&str]) {
    let reference = torch_reference(kind);
    let vs = var_store();
    let mut optimizer = Optimizer::new(&vs, kind);
    assert_eq!(
        optimizer.variables().len(),
        SHAPES.len(),
        "the untrainable variable has no optimizer state"
    );
    let dir = std::env::temp_dir().join(format!(
        "ninjazero-optim-{}-{}",
        kind.name(),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    for (step, expected) in reference.iter().enumerate() {
        let grads: Vec<Tensor> = SHAPES
            .iter()
            .enumerate()
            .map(|(k, (_, shape))| {
                Tensor::from_slice(&gradient(k, step, numel(shape))).view(*shape)
            })
            .collect();
        optimizer.step(&grads, LRS[step], WEIGHT_DECAY);
        assert_eq!(optimizer.step, step as u64 + 1);
        for ((name, _), t) in SHAPES.iter().zip(optimizer.variables()) {
            assert_close(
                &format!("step {}: param/{name}", step + 1),
                &values(t),
                &expected[&format!("param/{name}")],
            );
        }
        // The checkpointed state is torch's state too.
        let path = dir.join("optimizer.safetensors");
        optimizer.save(&path).unwrap();
        let state: std::collections::HashMap<String, Tensor> = Tensor::read_safetensors(&path)
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(state.len(), SHAPES.len() * slots.len());
        for (name, _) in SHAPES {
            for slot in slots {
                let key = format!("{slot}/{name}");
                assert_close(
                    &format!("step {}: {key}", step + 1),
                    &values(&state[&key]),
                    &expected[&key],
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sgd_with_momentum_matches_torch_optim_sgd() {
    compare_with_torch(OptimizerKind::Sgd { momentum: 0.9 }, &["momentum"]);
}

#[test]
fn adamw_matches_torch_optim_adamw() {
    compare_with_torch(
        OptimizerKind::AdamW {
            beta1: 0.9,
            beta2: 0.999,
        },
        &["exp_avg", "exp_avg_sq"],
    );
}

/// Two steps worked out by hand, independently of PyTorch.
///
/// SGD, momentum 0.9, lr 0.1, decay 0.5 on a 2-D weight w = 2 and a bias b = 2, both with
/// gradient 1 and then 3:
///   step 1: buf_w = 1 + 0.5·2 = 2, w = 2 − 0.1·2 = 1.8; buf_b = 1, b = 2 − 0.1 = 1.9
///   step 2: buf_w = 0.9·2 + 3 + 0.5·1.8 = 5.7, w = 1.8 − 0.57 = 1.23;
///           buf_b = 0.9·1 + 3 = 3.9, b = 1.9 − 0.39 = 1.51
///
/// AdamW, betas (0.9, 0.999), lr 0.1, decay 0.5, same gradients:
///   step 1: m = 0.1, v = 0.001, m̂ = 1, v̂ = 1: the update is lr·1/(1 + 1e-8);
///           w = 2·(1 − 0.05) − 0.1/(1 + 1e-8) = 1.8 (to 1e-9); b = 2 − 0.1 = 1.9
///   step 2: m = 0.9·0.1 + 0.1·3 = 0.39, v = 0.999·0.001 + 0.001·9 = 0.009999,
///           m̂ = 0.39/0.19 = 2.0526316, v̂ = 0.009999/0.001999 = 5.0020010, √v̂ = 2.2365154,
///           update = 0.1·2.0526316/2.2365150 = 0.0917781;
///           w = 1.8·0.95 − 0.0917781 = 1.6182219; b = 1.9 − 0.0917781 = 1.8082219
#[test]
fn two_steps_worked_out_by_hand() {
    let cases: [(OptimizerKind, [f32; 2], [f32; 2]); 2] = [
        (
            OptimizerKind::Sgd { momentum: 0.9 },
            [1.8, 1.9],
            [1.23, 1.51],
        ),
        (
            OptimizerKind::AdamW {
                beta1: 0.9,
                beta2: 0.999,
            },
            [1.8, 1.9],
            [1.618_221_9, 1.808_221_9],
        ),
    ];
    for (kind, after_one, after_two) in cases {
        let vs = VarStore::new(Device::Cpu);
        let _ = vs.root().var_copy("b", &Tensor::from_slice(&[2.0f32]));
        let _ = vs
            .root()
            .var_copy("w", &Tensor::from_slice(&[2.0f32]).view([1, 1]));
        let mut optimizer = Optimizer::new(&vs, kind);
        for (g, expected) in [(1.0f32, after_one), (3.0, after_two)] {
            let grads = [
                Tensor::from_slice(&[g]),
                Tensor::from_slice(&[g]).view([1, 1]),
            ];
            optimizer.step(&grads, 0.1, 0.5);
            let got: Vec<f32> = optimizer.variables().iter().map(|t| values(t)[0]).collect();
            // Variables are in name order: b, then w.
            let want = [expected[1], expected[0]];
            for (name, (a, b)) in ["b", "w"].iter().zip(got.iter().zip(want)) {
                assert!(
                    (a - b).abs() <= 1e-6 * b.abs(),
                    "{} {name} after gradient {g}: {a}, expected {b}",
                    kind.name()
                );
            }
        }
    }
}
