#!/usr/bin/env bash
# The pipeline on a real Slurm cluster, with faults: a one-node cluster from Debian's
# packages (scripts/local-slurm.sh: munge, slurmctld, slurmd, installed when missing) and a
# real S3 server on 127.0.0.1 (SeaweedFS, scripts/lib/seaweedfs.sh). A smoke pipeline of
# 2 generations × 4 self-play shards (tiny network, CPU) runs through Slurm twice, once on
# file:// and once on s3://, while this script injects faults:
#   - the same self-play array index submitted a second time, running alongside the first;
#   - `scontrol requeue` of a self-play shard;
#   - slurmd killed (-9) and restarted mid-run;
#   - on s3://, the S3 server stopped for a few seconds while shards upload.
# Then: a second driver run must submit nothing, and tests/cluster.rs checks the stored run
# (exactly K shards and K·M distinct game ids per generation, no duplicate rows, each
# window.json lists exactly those objects, promotion decisions in order) and that it equals
# a --scheduler local run of the same seed object for object. Before the pipelines, the
# handicap matches of a piece-value study run as Slurm arrays (`worker match values`, one
# wave per round) into s3:// and must give the values of one process, and a ladder's games
# are shared by an array (`worker match ladder`) in s3:// and merged without playing again.
#
# It stops every service it started, whatever happens. Where Slurm cannot be installed (not
# root, no apt-get) it prints one SKIPPED line, except under CI=true, where that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/lib/seaweedfs.sh

SMOKE=(--preset smoke --device cpu --selfplay-shards 4 --arena-shards 2 --seed 3)
started=$SECONDS
bin=$PWD/target/release/ninjazero
cargo build --release -q
cargo test --release -q --no-run --test cluster 2> /dev/null

work=$(mktemp -d -t ninjazero-cluster-XXXXXX)
chmod 755 "$work" # munged runs as the munge user
# The S3 runs' local caches go with this test run: the bucket's name is fixed, so a cache
# of an earlier test run (its models, its training work) must not meet this one's.
export NINJAZERO_CACHE=$work/cache
slurm_dir=$work/slurm
cleanup() {
  status=$?
  scripts/local-slurm.sh down "$slurm_dir" > /dev/null 2>&1 || true
  seaweedfs_stop
  if [ $status -ne 0 ]; then
    echo "cluster-test: FAILED; the drivers' and jobs' output:" >&2
    tail -n 30 "$work"/*.log >&2 2> /dev/null || true
    echo "cluster-test: the jobs' output:" >&2
    ls -t "$work"/logs/*.out 2> /dev/null | head -n 6 | xargs -r tail -n 5 >&2 2> /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

say() { echo "cluster-test: $*"; }

rc=0
up=$(scripts/local-slurm.sh up "$slurm_dir") || rc=$?
if [ $rc -eq 3 ]; then
  if [ "${CI:-}" = true ]; then
    say "FAILED: Slurm is missing and cannot be installed here (needs root and apt-get); CI=true never skips"
    exit 1
  fi
  say "SKIPPED: Slurm is missing and cannot be installed here (needs root and apt-get)"
  exit 0
fi
[ $rc -eq 0 ] || exit $rc
eval "$up"
say "one-node Slurm $(sinfo --version | awk '{print $2}') up ($SLURM_CONF)"

# The reference: the same pipeline in one process.
"$bin" pipeline --run "$work/local" "${SMOKE[@]}" > "$work/local.log" 2>&1
say "local run done ($((SECONDS - started)) s)"

# Polls `$@` every 0.2 s for up to $1 seconds.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# The first job (array task) whose name ends in $1 and whose state matches $2.
job_of() {
  squeue --noheader --format='%i|%j|%T' | awk -F'|' -v name="$1" -v state="$2" \
    '$2 ~ name"$" && $3 ~ "^(" state ")$" {print $1; exit}'
}
queued() { [ -n "$(job_of "$1" "$2")" ]; }
queue_empty() { [ -z "$(squeue --noheader)" ]; }
held_back() { squeue --noheader --job "$1" --format=%r | grep -q BeginTime; }

# The faults every run gets, while its driver runs.
inject_faults() {
  local url=$1
  wait_for 60 queued selfplay-gen-0000 'PENDING|RUNNING'
  sbatch --parsable --job-name=duplicate-shard --output="$work/logs/duplicate-%A_%a.out" --array=2 \
    --wrap "'$bin' worker selfplay --run '$url' --device cpu --generation 0 --shard \"\$SLURM_ARRAY_TASK_ID\"" \
    > /dev/null
  say "fault: self-play shard 2 of generation 0 submitted a second time"
  local task
  wait_for 120 queued selfplay-gen-0001 RUNNING
  task=$(job_of selfplay-gen-0001 RUNNING)
  scontrol requeue "$task"
  # Slurm holds a requeued job back for two minutes once it is pending again; let it start
  # at once.
  wait_for 60 held_back "$task"
  scontrol update jobid="$task" StartTime=now
  say "fault: scontrol requeue $task (a running self-play shard of generation 1)"
  if [ "${2:-}" = s3 ]; then
    wait_for 120 queued selfplay-gen-0001 RUNNING
    seaweedfs_stop
    say "fault: S3 server stopped while generation 1's shards run"
    sleep 4
    seaweedfs_start "$work/s3" "$bucket"
    say "fault: S3 server started again"
  fi
  scripts/local-slurm.sh restart-slurmd "$slurm_dir" > /dev/null
  say "fault: slurmd killed (-9) and restarted while generation 1's shards run"
}

# A Slurm run of the smoke pipeline at $1, with faults; then the rerun and the checks.
cluster_run() {
  local url=$1 name=$2
  local t0=$SECONDS
  "$bin" pipeline --run "$url" "${SMOKE[@]}" --scheduler slurm --poll-seconds 1 \
    --slurm-log-dir "$work/logs" > "$work/$name-driver.log" 2>&1 &
  local driver=$!
  inject_faults "$url" "$name"
  wait "$driver"
  say "$name: the driver finished after $((SECONDS - t0)) s: $(grep -c 'submitted .* as Slurm job' "$work/$name-driver.log") stages submitted"
  wait_for 60 queue_empty
  "$bin" pipeline --run "$url" "${SMOKE[@]}" --scheduler slurm > "$work/$name-rerun.log" 2>&1
  if ! grep -q "nothing to submit" "$work/$name-rerun.log" || [ -n "$(squeue --noheader)" ]; then
    say "FAILED: a second driver run on $url submitted jobs:"
    cat "$work/$name-rerun.log"
    exit 1
  fi
  say "$name: a second driver run submitted nothing"
  if ! NINJAZERO_CLUSTER_RUN=$url NINJAZERO_CLUSTER_REFERENCE=$work/local \
    cargo test --release -q --test cluster -- --ignored > "$work/$name-check.log" 2>&1; then
    say "FAILED: the stored run at $url:"
    cat "$work/$name-check.log"
    exit 1
  fi
  say "$name: K shards, K·M distinct ids, windows, decisions in order, equal to the local run"
}

# Piece values from handicap matches shared by a Slurm array (`worker match values`) in
# the store at $1: one wave of 4 jobs per self-consistent round, each after the last, then
# `values` merges the parts. Its values must equal one process's (in a local directory).
shared_matches() {
  local out=$1 t0=$SECONDS
  local matches="--variant chess --player alphabeta:depth=1 --rounds 2 --games 30 --max-plies 300 --bootstrap 20 --threads 1 --device cpu"
  # shellcheck disable=SC2086 # $matches is a list of words
  "$bin" values $matches --out "$work/values-local" > "$work/values-local.log" 2>&1
  local job="'$bin' worker match values --shard \$SLURM_ARRAY_TASK_ID --shards 4 $matches --out '$out'"
  local wave1 wave2
  wave1=$(sbatch --parsable --job-name=values-round-1 --output="$work/logs/values-%A_%a.out" --array=0-3 --wrap "$job")
  wave2=$(sbatch --parsable --job-name=values-round-2 --output="$work/logs/values-%A_%a.out" --array=0-3 \
    --dependency="afterok:$wave1" --kill-on-invalid-dep=yes --wrap "$job")
  sbatch --parsable --job-name=values-merge --output="$work/values-shared.log" \
    --dependency="afterok:$wave2" --kill-on-invalid-dep=yes \
    --wrap "'$bin' values $matches --out '$out'" > /dev/null
  wait_for 300 queue_empty
  # The merge prints the report it stores as values.md.
  rows() { grep '| handicap matches |' "$1" || true; }
  local values
  values=$(cat "$work/values-local/match-values.txt")
  if [ -z "$(rows "$work/values-shared.log")" ] \
    || [ "$(rows "$work/values-local/values.md")" != "$(rows "$work/values-shared.log")" ] \
    || ! grep -q "wrote $out/values.md" "$work/values-shared.log"; then
    say "FAILED: the values of the matches shared in $out differ from one process's:"
    tail -n 20 "$work/values-shared.log" "$work/values-local/values.md"
    exit 1
  fi
  say "matches: 2 rounds x 4 array jobs in $out, merged: the values of one process ($values) in $((SECONDS - t0)) s"
}

# A ladder's games shared by a Slurm array (`worker match ladder`) in the store at $1: the
# ladder run after them must find every game stored and play none.
shared_ladder() {
  local dir=$1 t0=$SECONDS
  local ladder="--variant insane-ninja --player random --games 4 --ms 20 --max-plies 40 --threads 1 --device cpu"
  local shards
  shards=$(sbatch --parsable --job-name=ladder-shards --output="$work/logs/ladder-%A_%a.out" --array=0-1 \
    --wrap "'$bin' worker match ladder --shard \$SLURM_ARRAY_TASK_ID --shards 2 $ladder --dir '$dir'")
  sbatch --parsable --job-name=ladder-merge --output="$work/ladder-merge.log" \
    --dependency="afterok:$shards" --kill-on-invalid-dep=yes \
    --wrap "'$bin' ladder $ladder --dir '$dir'" > /dev/null
  wait_for 300 queue_empty
  # 9 pairings (the anchors' chain and random against each) of 4 games.
  if ! grep -q "^0 games played now, 36 reused from $dir" "$work/ladder-merge.log" 2> /dev/null; then
    say "FAILED: the ladder did not find the 36 games its 2 array jobs stored in $dir:"
    tail -n 20 "$work/ladder-merge.log" "$work"/logs/ladder-*.out
    exit 1
  fi
  say "ladder: 2 array jobs stored 36 games in $dir, the ladder merged them and played none in $((SECONDS - t0)) s"
}

mkdir -p "$work/logs" "$work/s3"
cluster_run "file://$work/file-run" file

bucket=ninjazero-cluster
seaweedfs_start "$work/s3" "$bucket"
say "SeaweedFS at $AWS_ENDPOINT_URL"
shared_matches "s3://$bucket/values"
shared_ladder "s3://$bucket/ladder"
cluster_run "s3://$bucket/run" s3

say "passed in $((SECONDS - started)) s"
