#!/usr/bin/env bash
# Throws bad input at every command, as a demanding user would, and counts the outcomes:
# a refusal (exit 1 or 2 with a message) is what we want; a panic (exit 101 or "panicked"),
# a hang (no answer within the time limit) or a success on bad input is a bug.
#   usage: scripts/bad-input-probe.sh [path/to/ninjazero]   (after `cargo build --release`)
# Prints one line per invocation that misbehaved, then the totals; exits 1 if any did.
set -uo pipefail
cd "$(dirname "$0")/.."
NZ=${1:-target/release/ninjazero}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
LIMIT=60

tried=0 refused=0 panicked=0 hung=0 accepted=0
# check EXPECT ARGS...: runs one invocation (stdin from $INPUT if set); EXPECT is "refuse"
# (exit 1 or 2) or "answer" (exit 0 and no panic, for UCI sessions that must not hang).
check() {
  local expect=$1
  shift
  tried=$((tried + 1))
  local out rc
  out=$(timeout "$LIMIT" "$NZ" "$@" <"${INPUT:-/dev/null}" 2>&1)
  rc=$?
  if [ $rc -eq 124 ]; then
    hung=$((hung + 1)); echo "HANG     ninjazero $*"
  elif [ $rc -eq 101 ] || grep -q "panicked" <<<"$out"; then
    panicked=$((panicked + 1)); echo "PANIC    ninjazero $*"
  elif [ "$expect" = refuse ] && [ $rc -eq 0 ]; then
    accepted=$((accepted + 1)); echo "ACCEPTED ninjazero $*"
  elif [ "$expect" = answer ] && [ $rc -ne 0 ]; then
    accepted=$((accepted + 1)); echo "FAILED   ninjazero $* (exit $rc)"
  else
    refused=$((refused + 1))
  fi
}

echo "probe: preparing a tiny model and datasets in $work"
"$NZ" model init --variant chess --preset tiny --out "$work/chess.safetensors" >/dev/null
"$NZ" model init --variant insane-ninja --preset tiny --out "$work/ninja.safetensors" >/dev/null
"$NZ" selfplay --variant chess --games 4 --sims 8 --cheap-sims 4 --max-plies 30 \
  --concurrency 4 --out "$work/chess-games" >/dev/null 2>&1
"$NZ" selfplay --variant chess --games 2 --sims 8 --cheap-sims 4 --max-plies 30 \
  --concurrency 2 --out "$work/two-games" >/dev/null 2>&1
mkdir -p "$work/a-dir" && echo "not a checkpoint" >"$work/bad.safetensors" && touch "$work/file"
D="--data $work/chess-games --init $work/chess.safetensors"

# Numbers out of range, for every command that takes one.
for v in 0 -1 NaN abc 99999999999999999999; do
  check refuse selfplay --variant chess --games 1 --out "$work/x" --threads "$v"
  check refuse train --variant chess $D --out "$work/o.safetensors" --work "$work/w" --threads "$v"
  check refuse bench nn --threads "$v" --no-python
  check refuse bench train --threads "$v" --no-python
  check refuse arena --variant chess --a random --b random --threads "$v"
  check refuse values --variant chess --data "$work/chess-games" --threads "$v"
done
for v in -0.5 1.5 NaN inf; do
  check refuse selfplay --variant chess --games 1 --out "$work/x" --full-search-probability "$v"
done
for v in -1 NaN inf 1e9 0; do
  check refuse bench perft --seconds "$v"
  check refuse bench nn --seconds "$v" --no-python
done
check refuse bench nn --batches 0 --no-python
check refuse train --variant chess $D --out "$work/o.safetensors" --work "$work/w" --batch-size 100000000
check refuse train --variant chess $D --out "$work/o.safetensors" --work "$work/w" --lr 1e30
check refuse selfplay --variant chess --games 1 --out "$work/x" --sims 0
check refuse selfplay --variant chess --games 1 --out "$work/x" --concurrency 0
# A device that is no device, and a GPU no machine has (refused on GPU machines too).
for v in gpu cuda:99999 cuda:-1; do
  check refuse selfplay --variant chess --games 1 --out "$work/x" --device "$v"
done
check refuse perft --variant chess --depth 99
check refuse play --variant chess --sims 0
check refuse pipeline --run "$work/run" --generations 0
check refuse status --run ''
check refuse status --run "$work/a-dir"
check refuse pipeline --run "$work/slurm-run" --preset smoke --variant chess --scheduler slurm \
  --time-limit 2h --init-only
check refuse ladder --variant chess --player random --games 1 --dir "$work/file"

# Settings and files that do not fit.
check refuse train --variant chess $D --out "$work/a-dir" --work "$work/w2" --steps 2
"$NZ" train --variant chess $D --out "$work/o.safetensors" --work "$work/w3" --steps 2 \
  --batch-size 8 >/dev/null 2>&1
check refuse train --variant chess $D --out "$work/o.safetensors" --work "$work/w3" --steps 3 \
  --batch-size 8
check refuse train --variant chess $D --out "$work/o.safetensors" --work "$work/w3" --steps 2 \
  --batch-size 8 --lr 0.5
check refuse selfplay --variant insane-ninja --games 1 --out "$work/chess-games"
check refuse selfplay --variant chess --games 1 --out "$work/file/x"
check refuse arena --variant chess --a random --b random --pairs 1 --out "$work/file/r.json"
check refuse arena --variant chess --a "mcts:$work/ninja.safetensors:sims=8" --b random --pairs 1
check refuse arena --variant chess --a "nonsense:1" --b random --pairs 1
check refuse arena --variant chess --a "alphabeta::depth=1" --b random --pairs 1
check refuse arena --variant chess --a "uniform:sims=0" --b random --pairs 1
# A learnt evaluation's path may hold ':'; a missing one, or one without its suffix, is refused.
check refuse arena --variant chess --a "uniform:sims=8:eval=$work/10:30/e.eval.json:mix=0.5" --b random --pairs 1
check refuse arena --variant chess --a "uniform:sims=8:eval=$work/10:30/e.json:mix=0.5" --b random --pairs 1
check refuse arena --variant chess --a "uniform:sims=8:eval=$work/10:30" --b random --pairs 1
check refuse data inspect "$work/nonexistent"
check refuse data pgn "$work/nonexistent"
check refuse data inspect "$work/a-dir"
check refuse model info "$work/nonexistent.safetensors"
check refuse model info "$work/bad.safetensors"
check refuse model info "$work/a-dir"
check refuse model init --variant chess --preset tiny --out "$work/chess.safetensors"
check refuse moves --variant chess --fen "not a fen"
check refuse perft --variant nonsense --depth 1
check refuse values --variant chess --data "$work/nonexistent" --games 0
check refuse values --variant chess --data "$work/chess-games" --data "$work/nonexistent" --games 0
check refuse values --variant asylum --data "$work/chess-games" --games 0

# Files whose numbers lie, and numbers a spec or a file cannot honour.
for edit in 's/"channels": [0-9]*/"channels": 0/' 's/"blocks": [0-9]*/"blocks": 2000000000/' \
  's/"policy_len": [0-9]*/"policy_len": 99999999999/' 's/"board_height": [0-9]*/"board_height": 0/'; do
  cp "$work/chess.safetensors" "$work/edited.safetensors"
  sed "$edit" "$work/chess.json" >"$work/edited.json"
  check refuse model info "$work/edited.safetensors"
  check refuse arena --variant chess --a "mcts:$work/edited.safetensors:sims=4" --b random --pairs 1
done
check refuse arena --variant chess --a uci:/bin/cat:depth=1:timeout=18446744073709551615 --b random --pairs 1
for v in Q=10001 Q=1e30 Q=-9; do
  check refuse arena --variant chess --a "alphabeta:depth=1:values=$v" --b random --pairs 1
done
check refuse arena --variant chess --a alphabeta:depth=1:mobility=100000 --b random --pairs 1
check refuse train --variant chess $D --out "$work/trained.bin" --work "$work/w4" --steps 2
check refuse fit-eval --variant chess --data "$work/chess-games" --data "$work/chess-games" --out "$work/e.eval.json"
check refuse fit-eval --variant chess --data "$work/chess-games" --data "$work/nonexistent" --out "$work/e.eval.json"
check refuse fit-eval --variant chess --data "$work/chess-games" --out "$work/file/e.eval.json"
check refuse bench perft --seconds 1e-300
check refuse uci --model "$work/nonexistent.safetensors"
check refuse values --variant chess --data "$work/chess-games" --player alphabeta:depth=1 --sims 8
check refuse arena --variant chess --a random --b random --pairs 1 --sprt=-1e308,1e308
"$NZ" pipeline --run "$work/edited-run" --preset smoke --variant chess --init-only >/dev/null 2>&1
for edit in 's/^generations = .*/generations = 0/' 's/^arena_shards = .*/arena_shards = 0/' \
  's/^concurrency = .*/concurrency = 0/'; do
  sed -i.kept "$edit" "$work/edited-run/run.toml"
  check refuse pipeline --run "$work/edited-run" --preset smoke --variant chess --device cpu
  check refuse status --run "$work/edited-run"
  mv "$work/edited-run/run.toml.kept" "$work/edited-run/run.toml"
done
check refuse worker manifest --run "$work/edited-run" --generation 3 --variant palace --shards 1 \
  --games-per-shard 1
check refuse worker manifest --run "$work/edited-run" --generation 3 --variant chess --shards 1 \
  --games-per-shard 1 --model run.toml

# UCI sessions that must answer rather than hang.
for go in "go wtime -100 btime -100" "go movetime -1" "go nodes -5" "go nodes abc" \
  "go depth -3" "go wtime abc"; do
  printf 'position startpos\n%s\n' "$go" >"$work/uci.in"
  INPUT="$work/uci.in" check answer uci
done
printf 'position startpos moves e2e4 %s\nsetoption name %s value 1\nquit\n' \
  "$(head -c 5000 /dev/zero | tr '\0' z)" "$(head -c 5000 /dev/zero | tr '\0' z)" >"$work/uci.in"
INPUT="$work/uci.in" check answer uci
printf 'e4e5q\n%s\nquit\n' "$(head -c 5000 /dev/zero | tr '\0' z)" >"$work/play.in"
INPUT="$work/play.in" check answer play --variant chess --sims 4

echo "probe: $tried invocations: $refused refused or answered as they should," \
  "$panicked panicked, $hung hung, $accepted accepted bad input"
[ $((panicked + hung + accepted)) -eq 0 ]
