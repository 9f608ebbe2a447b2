//! SGD with momentum and AdamW, written over the VarStore's trainable variables so that
//! their whole state (momentum buffers, moments, step count) can be checkpointed.
//!
//! The update rules are those of `torch.optim.SGD` (dampening 0, no Nesterov; weight
//! decay as an L2 term added to the gradient) and `torch.optim.AdamW` (decoupled weight
//! decay, bias-corrected moments, epsilon 1e-8), so `scripts/bench_train.py` runs the same
//! arithmetic in PyTorch.

use crate::config::OptimizerKind;
use crate::TrainError;
use std::path::Path;
use tch::{nn::VarStore, Kind, Tensor};

const ADAM_EPS: f64 = 1e-8;

/// A trainable variable and its optimizer state tensors.
struct Param {
    name: String,
    tensor: Tensor,
    /// Weight decay applies to convolution and linear weights, not to biases and batch norm.
    decay: bool,
    /// SGD: the momentum buffer; AdamW: first and second moments.
    state: Vec<Tensor>,
}

/// A checkpointable optimizer.
pub struct Optimizer {
    kind: OptimizerKind,
    params: Vec<Param>,
    /// Updates applied so far (AdamW's bias correction uses it).
    pub step: u64,
}

impl Optimizer {
    /// State for every trainable variable of `vs`, zero-initialised, in name order.
    pub fn new(vs: &VarStore, kind: OptimizerKind) -> Optimizer {
        let mut named: Vec<(String, Tensor)> = vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let slots = Self::slot_names(kind).len();
        let params = tch::no_grad(|| {
            named
                .into_iter()
                .map(|(name, tensor)| Param {
                    decay: tensor.dim() >= 2,
                    // zeros_like keeps the variable's (channels-last) layout.
                    state: (0..slots).map(|_| tensor.zeros_like()).collect(),
                    name,
                    tensor,
                })
                .collect()
        });
        Optimizer {
            kind,
            params,
            step: 0,
        }
    }

    fn slot_names(kind: OptimizerKind) -> &'static [&'static str] {
        match kind {
            OptimizerKind::Sgd { .. } => &["momentum"],
            OptimizerKind::AdamW { .. } => &["exp_avg", "exp_avg_sq"],
        }
    }

    pub fn kind(&self) -> OptimizerKind {
        self.kind
    }

    /// The trainable variables, in the order [`Optimizer::step`] expects their gradients.
    pub fn variables(&self) -> Vec<&Tensor> {
        self.params.iter().map(|p| &p.tensor).collect()
    }

    /// The gradients of `loss` with respect to the variables (fresh tensors, as
    /// `torch.autograd.grad` returns them: nothing to zero between steps).
    pub fn gradients(&self, loss: &Tensor) -> Vec<Tensor> {
        Tensor::run_backward(&[loss], &self.variables(), false, false)
    }

    /// The global L2 norm of `grads` (a scalar tensor, before clipping); when
    /// `max_norm > 0` the gradients are scaled down to that norm if above it (as
    /// `torch.nn.utils.clip_grad_norm_`, with no host synchronisation).
    pub fn clip_grad_norm(grads: &mut [Tensor], max_norm: f64) -> Tensor {
        tch::no_grad(|| {
            let norms: Vec<Tensor> = grads.iter().map(|g| g.norm()).collect();
            if norms.is_empty() {
                return Tensor::from(0.0f32);
            }
            let total = Tensor::stack(&norms, 0).norm();
            if max_norm > 0.0 {
                let coef = (max_norm / (&total + 1e-6)).clamp_max(1.0);
                for g in grads.iter_mut() {
                    let _ = g.g_mul_(&coef);
                }
            }
            total
        })
    }

    /// One update from `grads` (in [`Optimizer::variables`] order) with learning rate
    /// `lr` and weight decay `weight_decay`.
    pub fn step(&mut self, grads: &[Tensor], lr: f64, weight_decay: f64) {
        assert_eq!(grads.len(), self.params.len(), "one gradient per variable");
        self.step += 1;
        let t = self.step as i32;
        tch::no_grad(|| {
            for (p, g) in self.params.iter_mut().zip(grads) {
                let decay = if p.decay { weight_decay } else { 0.0 };
                match self.kind {
                    OptimizerKind::Sgd { momentum } => {
                        let buf = &mut p.state[0];
                        let _ = buf.g_mul_scalar_(momentum);
                        let _ = buf.g_add_(g);
                        if decay > 0.0 {
                            let _ = buf.g_add_(&(&p.tensor * decay));
                        }
                        let _ = p.tensor.g_add_(&(&*buf * -lr));
                    }
                    OptimizerKind::AdamW { beta1, beta2 } => {
                        if decay > 0.0 {
                            let _ = p.tensor.g_mul_scalar_(1.0 - lr * decay);
                        }
                        let (m, rest) = p.state.split_at_mut(1);
                        let (m, v) = (&mut m[0], &mut rest[0]);
                        let _ = m.lerp_(g, 1.0 - beta1);
                        let _ = v.g_mul_scalar_(beta2);
                        let _ = v.addcmul_(&(g * (1.0 - beta2)), g);
                        let bias1 = 1.0 - beta1.powi(t);
                        let bias2_sqrt = (1.0 - beta2.powi(t)).sqrt();
                        let denom = (v.sqrt() / bias2_sqrt) + ADAM_EPS;
                        let _ = p.tensor.g_add_(&(&*m / denom * (-lr / bias1)));
                    }
                }
            }
        });
    }

    /// The state tensors, named `SLOT/VARIABLE`.
    pub(crate) fn named_state(&self) -> Vec<(String, &Tensor)> {
        let slots = Self::slot_names(self.kind);
        self.params
            .iter()
            .flat_map(|p| {
                slots
                    .iter()
                    .zip(&p.state)
                    .map(|(slot, t)| (format!("{slot}/{}", p.name), t))
            })
            .collect()
    }

    /// Writes the state tensors ([`Optimizer::named_state`]) to a safetensors file.
    pub fn save(&self, path: &Path) -> Result<(), TrainError> {
        let named: Vec<(String, Tensor)> = self
            .named_state()
            .into_iter()
            .map(|(name, t)| (name, t.contiguous()))
            .collect();
        Tensor::write_safetensors(&named, path).map_err(|e| TrainError::torch(path, e))
    }

    /// Reads state written by [`Optimizer::save`] for the same network and optimizer kind.
    pub fn load(&mut self, path: &Path, step: u64) -> Result<(), TrainError> {
        let slots = Self::slot_names(self.kind);
        let mut stored: std::collections::HashMap<String, Tensor> = Tensor::read_safetensors(path)
            .map_err(|e| TrainError::torch(path, e))?
            .into_iter()
            .collect();
        let expected = self.params.len() * slots.len();
        if stored.len() != expected {
            return Err(TrainError::State(format!(
                "{}: {} tensors, expected {expected}",
                path.display(),
                stored.len()
            )));
        }
        tch::no_grad(|| {
            for p in &mut self.params {
                for (slot, t) in slots.iter().zip(&mut p.state) {
                    let key = format!("{slot}/{}", p.name);
                    let value = stored.remove(&key).ok_or_else(|| {
                        TrainError::State(format!("{}: no tensor {key}", path.display()))
                    })?;
                    if value.size() != t.size() || value.kind() != Kind::Float {
                        return Err(TrainError::State(format!(
                            "{}: {key} has shape {:?}, expected {:?}",
                            path.display(),
                            value.size(),
                            t.size()
                        )));
                    }
                    t.copy_(&value.to_device(t.device()));
                }
            }
            Ok(())
        })?;
        self.step = step;
        Ok(())
    }
}
