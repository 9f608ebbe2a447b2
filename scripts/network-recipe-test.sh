#!/usr/bin/env bash
# scripts/network-recipe.sh end to end at a toy scale (the smoke preset's evaluation run, a
# few teacher games, a few steps, one arena pair), then again: the rerun must keep every
# step's output and name the same player. A directory a player spec cannot carry, and a
# count that is not a whole number, are refused.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/ninjazero-recipe-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export PRESET=smoke GENERATIONS=1 TEACHER_GAMES=6 FIRST_STEPS=4 SECOND_STEPS=4 ARENA_PAIRS=1 MS=20
run="$dir/run"
fail() {
  echo "network-recipe-test: $1" >&2
  exit 1
}

./scripts/network-recipe.sh insane-ninja "$run" >"$dir/first.log" 2>&1 ||
  fail "the first run failed: $(tail -5 "$dir/first.log")"
player=$(tail -1 "$dir/first.log")
expected="player: mcts:$run/student.safetensors:ms=20:captures=1:eval=$run/evaluation/models/gen-0001.eval.json:mix=0.5:reuse=1:ptemp=1.5"
[[ "$player" == "$expected" ]] || fail "the last line is '$player', expected '$expected'"
grep -q '"wins"' "$run/arena-vs-depth2.json" || fail "no arena result in $run/arena-vs-depth2.json"
grep -q "4 steps (4 this run)" "$dir/first.log" || fail "the student did not train 4 steps"
students=$(md5sum "$run"/student*.safetensors)

./scripts/network-recipe.sh insane-ninja "$run" >"$dir/again.log" 2>&1 ||
  fail "the rerun failed: $(tail -5 "$dir/again.log")"
[[ "$(tail -1 "$dir/again.log")" == "$expected" ]] || fail "the rerun named another player"
for kept in student-first.safetensors student.safetensors arena-vs-depth2.json; do
  grep -q "^kept $run/$kept$" "$dir/again.log" || fail "the rerun did not keep $kept"
done
grep -q "selfplay: 0 new games" "$dir/again.log" || fail "the rerun played teacher games again"
[[ "$(md5sum "$run"/student*.safetensors)" == "$students" ]] || fail "the rerun changed a network"

if ./scripts/network-recipe.sh insane-ninja "$dir/a:b" >"$dir/colon.log" 2>&1; then
  fail "a directory with ':' was accepted"
fi
grep -q "holds a ':'" "$dir/colon.log" || fail "a directory with ':' was refused without its reason"
if ARENA_PAIRS=many ./scripts/network-recipe.sh insane-ninja "$run" >"$dir/word.log" 2>&1; then
  fail "ARENA_PAIRS=many was accepted"
fi
grep -q "ARENA_PAIRS='many' is not a whole number" "$dir/word.log" || fail "ARENA_PAIRS=many was refused without its reason"
echo "network-recipe-test: ok"
