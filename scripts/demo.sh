#!/usr/bin/env bash
# The README's main command: a short, real training pipeline on the default variant
# (insane-ninja), on the CPU, in runs/demo. Generation 0's games come from alpha-beta at
# depth 1 with every piece worth 1 (rules alone, no human piece values), whose own search
# values, beside the results, are the first network's value targets; then self-play ->
# training -> arena -> promotion, two generations, then games against the baselines; the
# summary is runs/demo/summary.md with the Elo chart runs/demo/elo.png. Running it again continues an interrupted run (or
# does nothing if it is complete; delete runs/demo to start over).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
./scripts/setup.sh
cargo build --release
./target/release/ninjazero pipeline --variant insane-ninja --run runs/demo --preset demo --device cpu \
  --first-player 'alphabeta:depth=1:values=P=1,N=1,B=1,R=1,Q=1,I=1,L=1' --player-values true "$@"
cat runs/demo/summary.md
