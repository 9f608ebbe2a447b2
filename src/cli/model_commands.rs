//! `model`: creating and describing checkpoints.

use super::numbers::whole;
use super::parse_variant;
use clap::Subcommand;
use ninjazero_model::{Model, NetConfig, Preset};
use ninjazero_rules::Variant;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Write a freshly initialised network (generation 0 of a run).
    Init {
        #[arg(long, value_parser = parse_variant)]
        variant: Variant,
        /// Network size: tiny, cpu or gpu.
        #[arg(long, default_value = "cpu")]
        preset: Preset,
        /// Residual blocks instead of the preset's (a smaller network searches more
        /// positions per second). [range: 1 to 64]
        #[arg(long, value_parser = whole::<usize>(1, 64))]
        blocks: Option<usize>,
        /// Channels of the trunk and the policy head instead of the preset's.
        /// [range: 4 to 512]
        #[arg(long, value_parser = whole::<i64>(4, 512))]
        channels: Option<i64>,
        /// Checkpoint path ending in `.safetensors` (a `.json` sidecar is written beside it);
        /// an existing file is refused, never replaced.
        #[arg(long, value_parser = checkpoint_out)]
        out: PathBuf,
        /// Seed for the initial weights.
        #[arg(long, default_value_t = 0)]
        seed: i64,
        /// Add the training-only material head, for `train --material-plies N` (play never
        /// computes it).
        #[arg(long)]
        material_head: bool,
    },
    /// Print a checkpoint's sidecar (variant, architecture, encoding, training step).
    Info { checkpoint: PathBuf },
}

pub fn run(command: ModelCommand) -> anyhow::Result<()> {
    match command {
        ModelCommand::Init {
            variant,
            preset,
            blocks,
            channels,
            out,
            seed,
            material_head,
        } => {
            // A mistyped --out must not turn a trained network into an untrained one.
            if out.exists() {
                anyhow::bail!(
                    "{}: already exists; model init writes an untrained network and never replaces a file (remove it or give another --out)",
                    out.display()
                );
            }
            let base = preset.config();
            let config = NetConfig {
                blocks: blocks.unwrap_or(base.blocks),
                channels: channels.unwrap_or(base.channels),
                material_head,
                ..base
            };
            let model = Model::seeded(variant, &config, tch::Device::Cpu, seed);
            model.save(&out)?;
            let head = if material_head {
                " with the material head"
            } else {
                ""
            };
            let size = if (config.blocks, config.channels) == (base.blocks, base.channels) {
                format!("{preset} network")
            } else {
                format!(
                    "{} blocks x {} channels, the rest of the {preset} preset",
                    config.blocks, config.channels
                )
            };
            println!("wrote {} ({size}{head} for {variant})", out.display());
        }
        ModelCommand::Info { checkpoint } => {
            let model = Model::load(&checkpoint, None, tch::Device::Cpu)?;
            let json = serde_json::to_string_pretty(&model.meta)?;
            println!("{json}");
        }
    }
    Ok(())
}

/// A checkpoint to write: its name ends in `.safetensors`, since its sidecar takes the same
/// stem with `.json` (another name would be written where no command reads a checkpoint,
/// or over the sidecar itself).
pub fn checkpoint_out(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    if path.extension().and_then(|e| e.to_str()) != Some("safetensors") {
        return Err(format!(
            "{text}: the checkpoint name must end in .safetensors"
        ));
    }
    Ok(path)
}
