//! The policy/value network: a ResNet trunk (optionally with squeeze-excitation), a
//! convolutional policy head over the move-kind planes and a win/draw/loss value head, and
//! optionally a training-only material head.
//!
//! Parameter names (`input.conv.weight`, `blocks.0.conv1.weight`, …) match
//! `scripts/reference_net.py`, which rebuilds the same network in PyTorch.

use crate::encoding::{plane, BoardShape};
use crate::policy::{policy_len, MOVE_KINDS};
use ninjazero_rules::Role;
use serde::{Deserialize, Serialize};
use tch::nn;
use tch::Tensor;

/// Architecture hyper-parameters; stored in every checkpoint's sidecar.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetConfig {
    pub blocks: usize,
    pub channels: i64,
    pub squeeze_excitation: bool,
    /// Channels of the value head's 1x1 convolution.
    pub value_channels: i64,
    /// Width of the value head's hidden layer.
    pub value_hidden: i64,
    /// A training-only head that predicts the material swing some plies ahead (see
    /// [`PolicyValueNet::forward_with_material`]); play never computes it. Absent from the
    /// sidecars of networks without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub material_head: bool,
}

/// Named network sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// 2 blocks x 32 channels: tests and the README demo.
    Tiny,
    /// 6 blocks x 64 channels: self-play and training on a CPU.
    Cpu,
    /// 12 blocks x 192 channels with squeeze-excitation: GPU machines.
    Gpu,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Tiny, Preset::Cpu, Preset::Gpu];

    pub fn config(self) -> NetConfig {
        let (blocks, channels, squeeze_excitation) = match self {
            Preset::Tiny => (2, 32, false),
            Preset::Cpu => (6, 64, false),
            Preset::Gpu => (12, 192, true),
        };
        NetConfig {
            blocks,
            channels,
            squeeze_excitation,
            value_channels: 32,
            value_hidden: 128,
            material_head: false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Preset::Tiny => "tiny",
            Preset::Cpu => "cpu",
            Preset::Gpu => "gpu",
        }
    }
}

impl std::str::FromStr for Preset {
    type Err = String;
    fn from_str(text: &str) -> Result<Preset, String> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| format!("unknown network preset '{text}' (expected tiny, cpu or gpu)"))
    }
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The most residual blocks a network may have: five times the `gpu` preset's 12, more
/// than any AlphaZero-style chess network uses. A sidecar claiming more is damaged (2e9
/// blocks would ask for terabytes before failing).
pub const MAX_BLOCKS: usize = 64;
/// The most trunk channels: five times the `gpu` preset's 192.
pub const MAX_CHANNELS: i64 = 1024;
/// The most channels of the value head's convolution: eight times the presets' 32.
pub const MAX_VALUE_CHANNELS: i64 = 256;
/// The widest value head hidden layer: eight times the presets' 128.
pub const MAX_VALUE_HIDDEN: i64 = 1024;

impl NetConfig {
    /// Why this architecture cannot be built, if it cannot: each size from 1 to its `MAX_*`
    /// bound (libtorch panics on 0 or negative sizes, and aborts the process when a huge one
    /// cannot be allocated), and 4 channels at least with squeeze-excitation (which reduces
    /// them to a quarter). Checked wherever a configuration comes from a file.
    pub fn check(&self) -> Result<(), String> {
        let range = |name: &str, value: i64, max: i64| {
            if (1..=max).contains(&value) {
                Ok(())
            } else {
                Err(format!(
                    "architecture {name} must be 1 to {max}, got {value}"
                ))
            }
        };
        if !(1..=MAX_BLOCKS).contains(&self.blocks) {
            return Err(format!(
                "architecture blocks must be 1 to {MAX_BLOCKS}, got {}",
                self.blocks
            ));
        }
        range("channels", self.channels, MAX_CHANNELS)?;
        range("value_channels", self.value_channels, MAX_VALUE_CHANNELS)?;
        range("value_hidden", self.value_hidden, MAX_VALUE_HIDDEN)?;
        if self.squeeze_excitation && self.channels < 4 {
            return Err(format!(
                "architecture with squeeze_excitation needs at least 4 channels, got {}",
                self.channels
            ));
        }
        Ok(())
    }

    /// Floating-point operations of one position's forward pass (a multiply-add counts
    /// two), counting convolutions directly.
    pub fn flops_per_position(&self, shape: &BoardShape) -> f64 {
        let cells = shape.cells() as f64;
        let c = self.channels as f64;
        let conv = |inputs: f64, outputs: f64, kernel: f64| 2.0 * kernel * inputs * outputs * cells;
        let trunk = conv(plane::COUNT as f64, c, 9.0) + self.blocks as f64 * 2.0 * conv(c, c, 9.0);
        let policy = conv(c, c, 1.0) + conv(c, MOVE_KINDS as f64, 1.0);
        let v = self.value_channels as f64;
        let h = self.value_hidden as f64;
        let value = conv(c, v, 1.0) + 2.0 * v * cells * h + 2.0 * h * 3.0;
        trunk + policy + value
    }
}

/// Convolution (no bias), batch norm and ReLU, named `PATH.conv` and `PATH.bn`.
#[derive(Debug)]
struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
    /// The convolution with the batch norm's running statistics folded in, for inference
    /// (see [`PolicyValueNet::fold_batch_norms`]).
    folded: Option<FoldedConv>,
}

/// A convolution with a bias that computes what a convolution and an inference-mode batch
/// norm compute: one libtorch operation instead of two.
#[derive(Debug)]
struct FoldedConv {
    weight: Tensor,
    bias: Tensor,
    padding: i64,
}

/// The `eps` of every batch norm here (tch's and PyTorch's default).
const BATCH_NORM_EPS: f64 = 1e-5;

impl ConvBn {
    fn new(path: nn::Path, inputs: i64, outputs: i64, kernel: i64) -> ConvBn {
        let config = nn::ConvConfig {
            padding: kernel / 2,
            bias: false,
            ..Default::default()
        };
        ConvBn {
            conv: nn::conv2d(&path / "conv", inputs, outputs, kernel, config),
            bn: nn::batch_norm2d(
                &path / "bn",
                outputs,
                nn::BatchNormConfig {
                    eps: BATCH_NORM_EPS,
                    ..Default::default()
                },
            ),
            folded: None,
        }
    }

    /// Batch norm `y = (x - mean) / sqrt(var + eps) * gamma + beta` after a convolution `x =
    /// W * input` is the convolution with weights `W * s` and bias `beta - mean * s`, where
    /// `s = gamma / sqrt(var + eps)` per output channel.
    fn fold(&mut self) {
        tch::no_grad(|| {
            let bn = &self.bn;
            let (gamma, beta) = (bn.ws.as_ref(), bn.bs.as_ref());
            let ones = bn.running_var.ones_like();
            let scale = gamma.unwrap_or(&ones) / (&bn.running_var + BATCH_NORM_EPS).sqrt();
            let shift = beta.map_or_else(|| ones.zeros_like(), Tensor::shallow_clone);
            let weight = &self.conv.ws * scale.view([-1, 1, 1, 1]);
            self.folded = Some(FoldedConv {
                weight: channels_last(&weight),
                bias: shift - &bn.running_mean * &scale,
                padding: self.conv.ws.size()[2] / 2,
            });
        });
    }

    /// Without the ReLU (the residual adds before it).
    fn forward_linear(&self, xs: &Tensor, train: bool) -> Tensor {
        match (&self.folded, train) {
            (Some(f), false) => {
                xs.conv2d(&f.weight, Some(&f.bias), [1, 1], [f.padding; 2], [1, 1], 1)
            }
            _ => xs.apply(&self.conv).apply_t(&self.bn, train),
        }
    }

    fn forward(&self, xs: &Tensor, train: bool) -> Tensor {
        self.forward_linear(xs, train).relu()
    }
}

/// Channel gating from globally pooled features.
#[derive(Debug)]
struct SqueezeExcitation {
    reduce: nn::Linear,
    expand: nn::Linear,
}

impl SqueezeExcitation {
    fn forward(&self, xs: &Tensor) -> Tensor {
        let (n, c) = (xs.size()[0], xs.size()[1]);
        let gate = xs
            .mean_dim(&[2i64, 3][..], false, xs.kind())
            .apply(&self.reduce)
            .relu()
            .apply(&self.expand)
            .sigmoid()
            .view([n, c, 1, 1]);
        xs * gate
    }
}

#[derive(Debug)]
struct ResidualBlock {
    first: ConvBn,
    second: ConvBn,
    se: Option<SqueezeExcitation>,
}

impl ResidualBlock {
    fn new(path: nn::Path, channels: i64, se: bool) -> ResidualBlock {
        ResidualBlock {
            first: ConvBn::new(&path / "conv1", channels, channels, 3),
            second: ConvBn::new(&path / "conv2", channels, channels, 3),
            se: se.then(|| SqueezeExcitation {
                reduce: nn::linear(
                    &path / "se_reduce",
                    channels,
                    channels / 4,
                    Default::default(),
                ),
                expand: nn::linear(
                    &path / "se_expand",
                    channels / 4,
                    channels,
                    Default::default(),
                ),
            }),
        }
    }

    fn forward(&self, xs: &Tensor, train: bool) -> Tensor {
        let mut out = self
            .second
            .forward_linear(&self.first.forward(xs, train), train);
        if let Some(se) = &self.se {
            out = se.forward(&out);
        }
        (out + xs).relu()
    }
}

/// The material head: a 1x1 convolution to the value head's channels, then one linear
/// layer to an output per role.
#[derive(Debug)]
struct MaterialHead {
    hidden: ConvBn,
    out: nn::Linear,
}

/// The network. Inputs: `[N, planes, height, width]`; outputs: policy logits `[N, policy]`
/// and win/draw/loss logits `[N, 3]` from the side to move's view.
#[derive(Debug)]
pub struct PolicyValueNet {
    pub config: NetConfig,
    pub shape: BoardShape,
    input: ConvBn,
    blocks: Vec<ResidualBlock>,
    policy_hidden: ConvBn,
    policy_out: nn::Conv2D,
    value_hidden: ConvBn,
    value_fc: nn::Linear,
    value_out: nn::Linear,
    material: Option<MaterialHead>,
}

impl PolicyValueNet {
    /// Creates the parameters under `root` (freshly initialised).
    pub fn new(root: &nn::Path, config: &NetConfig, shape: BoardShape) -> PolicyValueNet {
        let c = config.channels;
        let v = config.value_channels;
        let cells = shape.cells() as i64;
        let policy_path = root / "policy";
        let value_path = root / "value";
        PolicyValueNet {
            input: ConvBn::new(root / "input", plane::COUNT as i64, c, 3),
            blocks: (0..config.blocks)
                .map(|i| ResidualBlock::new(root / "blocks" / i, c, config.squeeze_excitation))
                .collect(),
            policy_hidden: ConvBn::new(&policy_path / "hidden", c, c, 1),
            policy_out: nn::conv2d(
                &policy_path / "out",
                c,
                MOVE_KINDS as i64,
                1,
                Default::default(),
            ),
            value_hidden: ConvBn::new(&value_path / "hidden", c, v, 1),
            value_fc: nn::linear(
                &value_path / "fc",
                v * cells,
                config.value_hidden,
                Default::default(),
            ),
            value_out: nn::linear(
                &value_path / "out",
                config.value_hidden,
                3,
                Default::default(),
            ),
            material: config.material_head.then(|| {
                let path = root / "material";
                MaterialHead {
                    hidden: ConvBn::new(&path / "hidden", c, v, 1),
                    out: nn::linear(
                        &path / "out",
                        v * cells,
                        Role::COUNT as i64,
                        Default::default(),
                    ),
                }
            }),
            config: config.clone(),
            shape,
        }
    }

    /// Folds each batch norm's running statistics into its convolution, so that forward
    /// passes with `train == false` run one operation where they ran two, saving a pass over
    /// each layer's output (most felt at batch 1, where the layers are small). The folded
    /// copies do not follow later changes of the weights: only for a network that is no
    /// longer trained, such as a player's. Forward passes with `train == true` are
    /// unchanged.
    pub fn fold_batch_norms(&mut self) {
        let blocks = self
            .blocks
            .iter_mut()
            .flat_map(|b| [&mut b.first, &mut b.second]);
        let heads = [&mut self.policy_hidden, &mut self.value_hidden];
        let material = self.material.as_mut().map(|m| &mut m.hidden);
        for conv_bn in std::iter::once(&mut self.input)
            .chain(blocks)
            .chain(heads)
            .chain(material)
        {
            conv_bn.fold();
        }
    }

    /// Policy logits and WDL logits.
    pub fn forward(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        self.heads(&self.trunk(xs, train), train)
    }

    /// Policy logits, WDL logits and, where the network has the material head, its
    /// prediction `[N, Role::COUNT]`: per role, how much the side to move's count minus the
    /// opponent's will have changed some plies ahead (the trainer's
    /// `material_plies`). A dense, tactical signal while the game results are few.
    pub fn forward_with_material(
        &self,
        xs: &Tensor,
        train: bool,
    ) -> (Tensor, Tensor, Option<Tensor>) {
        let trunk = self.trunk(xs, train);
        let (policy, value) = self.heads(&trunk, train);
        let material = self.material.as_ref().map(|head| {
            head.hidden
                .forward(&trunk, train)
                .reshape([xs.size()[0], -1])
                .apply(&head.out)
        });
        (policy, value, material)
    }

    fn trunk(&self, xs: &Tensor, train: bool) -> Tensor {
        let mut trunk = self.input.forward(xs, train);
        for block in &self.blocks {
            trunk = block.forward(&trunk, train);
        }
        trunk
    }

    fn heads(&self, trunk: &Tensor, train: bool) -> (Tensor, Tensor) {
        let n = trunk.size()[0];
        let policy = self
            .policy_hidden
            .forward(trunk, train)
            .apply(&self.policy_out)
            .permute([0, 2, 3, 1])
            .reshape([n, policy_len(&self.shape) as i64]);
        let value = self
            .value_hidden
            .forward(trunk, train)
            .reshape([n, -1])
            .apply(&self.value_fc)
            .relu()
            .apply(&self.value_out);
        (policy, value)
    }
}

/// Stores the convolution weights in channels-last order. libtorch's CPU (oneDNN) and CUDA
/// convolutions then run channels-last throughout, which is markedly faster at large
/// batches; values and parameter names are unchanged. `load` copies into these tensors and
/// keeps the layout.
pub fn use_channels_last(vs: &nn::VarStore) {
    tch::no_grad(|| {
        for (_, mut weight) in vs.variables() {
            if weight.dim() == 4 {
                weight.set_data(&channels_last(&weight));
            }
        }
    });
}

/// The same values as `weight` (4-dimensional), stored channels-last.
fn channels_last(weight: &Tensor) -> Tensor {
    weight
        .permute([0, 2, 3, 1])
        .contiguous()
        .permute([0, 3, 1, 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_passes_the_sidecar_check() {
        for preset in Preset::ALL {
            let config = preset.config();
            assert_eq!(config.check(), Ok(()), "{preset}");
            let with_se = NetConfig {
                squeeze_excitation: true,
                material_head: true,
                ..config
            };
            assert_eq!(with_se.check(), Ok(()), "{preset}");
        }
    }
}
