#!/usr/bin/env bash
# scripts/network-recipe.sh end to end at a toy scale (the smoke preset's evaluation run, a
# few teacher games, a few steps, one arena pair, the fits choosing their square penalty),
# then again: the rerun must keep every step's output, the run's penalties, and name the
# same player. The run's directory holds a ':' (player specs carry it). A count that is not
# a whole number, and another penalty for the run, are refused.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/ninjazero-recipe-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export PRESET=smoke GENERATIONS=1 TEACHER_GAMES=6 FIRST_STEPS=4 SECOND_STEPS=4 ARENA_PAIRS=1 MS=20
run="$dir/10:30"
fail() {
  echo "network-recipe-test: $1" >&2
  exit 1
}

SQUARE_L2=auto ./scripts/network-recipe.sh insane-ninja "$run" >"$dir/first.log" 2>&1 ||
  fail "the first run failed: $(tail -5 "$dir/first.log")"
player=$(tail -1 "$dir/first.log")
expected="player: mcts:$run/student.safetensors:ms=20:captures=1:eval=$run/evaluation/models/gen-0001.eval.json:mix=0.5:reuse=1:ptemp=1.5"
[[ "$player" == "$expected" ]] || fail "the last line is '$player', expected '$expected'"
grep -q '"wins"' "$run/arena-vs-depth2.json" || fail "no arena result in $run/arena-vs-depth2.json"
grep -q "4 steps (4 this run)" "$dir/first.log" || fail "the student did not train 4 steps"
students=$(md5sum "$run"/student*.safetensors)
grep -q "^square_l2 = \[" "$run/evaluation/run.toml" || fail "the run did not keep SQUARE_L2=auto"

./scripts/network-recipe.sh insane-ninja "$run" >"$dir/again.log" 2>&1 ||
  fail "the rerun failed: $(tail -5 "$dir/again.log")"
[[ "$(tail -1 "$dir/again.log")" == "$expected" ]] || fail "the rerun named another player"
for kept in student-first.safetensors student.safetensors arena-vs-depth2.json; do
  grep -q "^kept $run/$kept$" "$dir/again.log" || fail "the rerun did not keep $kept"
done
grep -q "selfplay: 0 new games" "$dir/again.log" || fail "the rerun played teacher games again"
[[ "$(md5sum "$run"/student*.safetensors)" == "$students" ]] || fail "the rerun changed a network"
if SQUARE_L2=0.05 ./scripts/network-recipe.sh insane-ninja "$run" >"$dir/l2.log" 2>&1; then
  fail "SQUARE_L2=0.05 was accepted for a run started with auto"
fi
grep -q -- "--square-l2 \[0.01, 0.03, 0.1, 0.3\] → \[0.05\]" "$dir/l2.log" ||
  fail "SQUARE_L2=0.05 was refused without its reason: $(tail -3 "$dir/l2.log")"

if ARENA_PAIRS=many ./scripts/network-recipe.sh insane-ninja "$run" >"$dir/word.log" 2>&1; then
  fail "ARENA_PAIRS=many was accepted"
fi
grep -q "ARENA_PAIRS='many' is not a whole number" "$dir/word.log" || fail "ARENA_PAIRS=many was refused without its reason"
echo "network-recipe-test: ok"
