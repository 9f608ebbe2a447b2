#!/usr/bin/env bash
# The README's main command. Until the training pipeline lands, the main job is the rules
# core and the network: perft of every variant's start position, the perft speed benchmark
# and the network evaluation benchmark (against PyTorch) on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
./scripts/setup.sh
cargo build --release
for variant in chess palace palace-scepter ninjutsu asylum asylum-ff insane-ninja insane-ninja-2 insane-ninja-drops; do
  printf '%-20s ' "$variant"
  ./target/release/ninjazero perft --variant "$variant" --depth 4
done
./target/release/ninjazero bench perft
./target/release/ninjazero bench nn --presets cpu --batches 1,16,64,256
