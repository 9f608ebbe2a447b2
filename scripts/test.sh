#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, unit/integration/doc tests, and the run
# storage and cluster tests against real services started on this machine.
# This is the README's test command and what CI (.ci/run) runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
./scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release
# s3:// run storage against a real S3 server (SeaweedFS on 127.0.0.1), stopped afterwards.
./scripts/s3-test.sh
# The pipeline through a one-node Slurm cluster on file:// and s3://, with faults injected;
# every service it starts is stopped afterwards.
./scripts/cluster-test.sh
# The one-command network recipe at a toy scale: every step runs, a rerun keeps its outputs.
./scripts/network-recipe-test.sh
