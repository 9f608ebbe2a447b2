#!/usr/bin/env bash
# Piece values of a variant by all three methods of `ninjazero values`, from nothing but
# the rules (no piece value is given to any engine), in runs/values/VARIANT:
#   1. handicap matches: self-consistent rounds of a depth-2 alpha-beta engine that starts
#      with every piece worth 1 and is then given the values it measured;
#   2. outcome regression: self-play games of that engine with its final values;
#   3. value-network probe: a network trained on those games.
# Usage: scripts/piece_values.sh [VARIANT] [GAMES_PER_HANDICAP] [ROUNDS] [ENGINE_GAMES]
#        [TRAIN_STEPS]   (defaults: chess 400 3 2000 3000)
# Every step is kept on disk: a rerun continues where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
variant="${1:-chess}"
games="${2:-400}"
rounds="${3:-3}"
engine_games="${4:-2000}"
steps="${5:-3000}"
run="runs/values/$variant"
nz=./target/release/ninjazero
./scripts/setup.sh >/dev/null
cargo build --release --quiet
mkdir -p "$run"
matches=(--player alphabeta:depth=2 --rounds "$rounds" --games "$games" --device cpu)

# The matches need a dataset to run beside: start with a small model-free one.
$nz selfplay --variant "$variant" --games 200 --out "$run/mcts-games" --draw-at-max-plies \
    --no-resign --max-plies 600 --device cpu
$nz values --variant "$variant" --data "$run/mcts-games" --out "$run/report" "${matches[@]}" >/dev/null

# The engine with the values the last round measured.
engine="alphabeta:depth=2:values=$(cat "$run/report/match-values.txt")"
echo "self-consistent engine: $engine"
$nz selfplay --variant "$variant" --player "$engine" --games "$engine_games" --max-plies 400 \
    --out "$run/engine-games" --device cpu
if [ ! -f "$run/net.safetensors" ]; then
    [ -f "$run/net-init.safetensors" ] ||
        $nz model init --variant "$variant" --preset tiny --out "$run/net-init.safetensors"
    $nz train --variant "$variant" --data "$run/engine-games" --init "$run/net-init.safetensors" \
        --out "$run/net.safetensors" --work "$run/train" --preset demo --steps "$steps" --device cpu
fi
$nz values --variant "$variant" --data "$run/engine-games" --model "$run/net.safetensors" \
    --out "$run/report" "${matches[@]}"
