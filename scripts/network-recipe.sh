#!/usr/bin/env bash
# The network recipe, from the rules alone, in one command (docs/levers.md, "The recipe in
# 1.8 hours" and "The same recipe on Asylum Chess"):
#   1. a learnt evaluation: `pipeline --model evaluation --preset cpu`, GENERATIONS rounds;
#   2. its best generation, alpha-beta at depth 2, plays TEACHER_GAMES games that keep its
#      search values and soft policy targets (`soft=0.1`);
#   3. a tiny network learns them: FIRST_STEPS steps of 256, then SECOND_STEPS more from
#      those weights (a second schedule, its learning rate warmed up and decayed again);
#   4. the network at MS ms per move — the evaluation mixed into its leaves, captures
#      resolved, the tree kept between moves, its priors flattened — plays ARENA_PAIRS
#      pairs against `alphabeta:depth=2` (0 skips it).
#
#   scripts/network-recipe.sh [VARIANT] [DIR]
#
# Defaults: insane-ninja, runs/recipe-VARIANT; SEED 0, DEVICE cpu (cuda trains on a GPU),
# FIRST_STEPS 12000, SECOND_STEPS 16000, ARENA_PAIRS 32, MS 100, PRESET cpu (the evaluation
# run's; smoke checks the machinery). GENERATIONS and TEACHER_GAMES default to the measured
# recipe of each variant: insane-ninja 8 and 4,000 (about 1.8 hours on a 2-core CPU),
# asylum 10 and 13,000 (about 1.9 hours), any other variant 10 and 4,000 (not measured).
# SQUARE_L2 (auto, one number or a comma list) is the evaluation run's `--square-l2`; unset,
# the run's own (a new run: auto on asylum, 0.1 elsewhere; a stored run keeps its own).
# Rerunning it continues: each step keeps what is done (the pipeline run, the games
# already played, a finished network, the arena's result) and resumes an interrupted
# training. The last line names the player, e.g. for `ninjazero arena --a` or `ladder`.
set -euo pipefail
cd "$(dirname "$0")/.."
VARIANT=${1:-insane-ninja}
DIR=${2:-runs/recipe-$VARIANT}
case "$VARIANT" in
  insane-ninja) measured_generations=8 measured_games=4000 ;;
  asylum) measured_generations=10 measured_games=13000 ;;
  *) measured_generations=10 measured_games=4000 ;;
esac
GENERATIONS=${GENERATIONS:-$measured_generations}
TEACHER_GAMES=${TEACHER_GAMES:-$measured_games}
FIRST_STEPS=${FIRST_STEPS:-12000}
SECOND_STEPS=${SECOND_STEPS:-16000}
ARENA_PAIRS=${ARENA_PAIRS:-32}
MS=${MS:-100}
PRESET=${PRESET:-cpu}
DEVICE=${DEVICE:-cpu}
SEED=${SEED:-0}
SQUARE_L2=${SQUARE_L2:-}
# Bash arithmetic would read a word as 0 (and skip the arena): every count must be digits.
for setting in GENERATIONS TEACHER_GAMES FIRST_STEPS SECOND_STEPS ARENA_PAIRS MS SEED; do
  if [[ ! "${!setting}" =~ ^[0-9]+$ ]]; then
    echo "network-recipe: $setting='${!setting}' is not a whole number" >&2
    exit 2
  fi
done
export PATH="$HOME/.cargo/bin:$PATH"
./scripts/setup.sh >/dev/null
cargo build --release --quiet
ninjazero=./target/release/ninjazero
mkdir -p "$DIR"
step() { echo "$(date -u +%H:%M:%S) step $1"; }

step "1/4: the learnt evaluation ($GENERATIONS generations, $DIR/evaluation)"
"$ninjazero" pipeline --variant "$VARIANT" --model evaluation --preset "$PRESET" --device cpu \
  --run "$DIR/evaluation" --generations "$GENERATIONS" --seed "$SEED" \
  ${SQUARE_L2:+--square-l2 "$SQUARE_L2"}
# Fails, saying why, where no learnt evaluation beat the first player.
evaluation=$("$ninjazero" status --run "$DIR/evaluation" --best)

step "2/4: $TEACHER_GAMES teacher games by alphabeta:$evaluation:depth=2:soft=0.1"
"$ninjazero" selfplay --variant "$VARIANT" --player "alphabeta:$evaluation:depth=2:soft=0.1" \
  --games "$TEACHER_GAMES" --out "$DIR/teacher-games" --max-plies 300 --opening-plies 4 \
  --seed $((SEED + 1))

# Trains FROM into TO for STEPS steps on the teacher's games: every position, its search
# values three quarters of the value target (the `imitate` preset), unless TO is there.
train() {
  local from=$1 to=$2 steps=$3
  if [[ -f "$to" ]]; then
    echo "kept $to"
    return
  fi
  "$ninjazero" train --variant "$VARIANT" --data "$DIR/teacher-games" --init "$from" \
    --out "$to" --work "${to%.safetensors}-work" --preset imitate --steps "$steps" \
    --seed "$SEED" --device "$DEVICE"
}
step "3/4: a tiny network learns them ($FIRST_STEPS steps, then $SECOND_STEPS more)"
initial="$DIR/student-initial.safetensors"
[[ -f "$initial" ]] ||
  "$ninjazero" model init --variant "$VARIANT" --preset tiny --out "$initial" --seed "$SEED"
train "$initial" "$DIR/student-first.safetensors" "$FIRST_STEPS"
train "$DIR/student-first.safetensors" "$DIR/student.safetensors" "$SECOND_STEPS"

player="mcts:$DIR/student.safetensors:ms=$MS:captures=1:eval=$evaluation:mix=0.5:reuse=1:ptemp=1.5"
# The player as measured: on the CPU (a batch-1 search of a tiny network gains nothing
# from a GPU), its 100 ms against alpha-beta's on the same cores.
if ((ARENA_PAIRS > 0)); then
  step "4/4: $ARENA_PAIRS pairs at $MS ms per move against alphabeta:depth=2"
  arena="$DIR/arena-vs-depth2.json"
  if [[ -f "$arena" ]]; then
    echo "kept $arena"
  else
    "$ninjazero" arena --variant "$VARIANT" --a "$player" --b alphabeta:depth=2 \
      --pairs "$ARENA_PAIRS" --opening-plies 4 --max-plies 300 --seed 11 --device cpu \
      --out "$arena"
  fi
fi
echo "player: $player"
