#!/usr/bin/env bash
# The learnt-evaluation loop, from the rules alone: alpha-beta at depth 1 counting every
# piece as 1 plays GAMES games; `fit-eval` fits a piece-square evaluation to their results;
# alpha-beta at depth DEPTH with that evaluation plays the next round's games; each fit
# sees the last two rounds' games. Every round's games and evaluation stay in DIR.
#
#   scripts/learnt-eval.sh [VARIANT] [ROUNDS] [DIR]
#
# Defaults: insane-ninja, 6 rounds, runs/learnt-eval-VARIANT; GAMES (1000), DEPTH (2) and
# SEED (0) from the environment. Rerunning it continues: games already in a round's
# directory are kept (each game's moves depend only on its seed and the player, and each
# fit on its games), so an interrupted loop ends where an uninterrupted one would.
# The last line names the final player, e.g. for `ninjazero ladder --player`.
set -euo pipefail
cd "$(dirname "$0")/.."
VARIANT=${1:-insane-ninja}
ROUNDS=${2:-6}
DIR=${3:-runs/learnt-eval-$VARIANT}
GAMES=${GAMES:-1000}
DEPTH=${DEPTH:-2}
SEED=${SEED:-0}
export PATH="$HOME/.cargo/bin:$PATH"
./scripts/setup.sh >/dev/null
cargo build --release --quiet
ninjazero=./target/release/ninjazero
mkdir -p "$DIR"
# Every piece letter: the pieces the variant does not have are never on its board.
player="alphabeta:depth=1:values=Q=1,R=1,B=1,N=1,P=1,M=1,G=1,W=1,I=1,J=1,L=1,C=1,S=1,Y=1"
previous=()
for round in $(seq 1 "$ROUNDS"); do
  games="$DIR/games-$round"
  echo "round $round: $GAMES games by $player"
  "$ninjazero" selfplay --variant "$VARIANT" --player "$player" --games "$GAMES" \
    --out "$games" --seed $((SEED * 1000 + round)) --device cpu
  eval_file="$DIR/eval-$round.eval.json"
  "$ninjazero" fit-eval --variant "$VARIANT" "${previous[@]}" --data "$games" --out "$eval_file"
  previous=(--data "$games")
  player="alphabeta:$eval_file:depth=$DEPTH"
done
echo "final player: alphabeta:$DIR/eval-$ROUNDS.eval.json:ms=100"
