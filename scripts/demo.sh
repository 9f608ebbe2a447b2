#!/usr/bin/env bash
# The README's main command: a short, real training pipeline on the default variant
# (insane-ninja), on the CPU, in runs/demo. Self-play -> training -> arena -> promotion,
# two generations, then games against the baselines; the summary is runs/demo/summary.md
# with the Elo chart runs/demo/elo.png. Running it again continues an interrupted run (or
# does nothing if it is complete; delete runs/demo to start over).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
./scripts/setup.sh
cargo build --release
./target/release/ninjazero pipeline --variant insane-ninja --run runs/demo --preset demo --device cpu
cat runs/demo/summary.md
