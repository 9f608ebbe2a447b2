#!/usr/bin/env bash
# A single-node Slurm cluster for tests, from Debian's packages (slurmctld, slurmd,
# slurm-client, munge) and without systemd: munged, slurmctld and slurmd run from a state
# directory of their own, on ports of their own, with a config that only SLURM_CONF points
# to — nothing under /etc is changed, and an existing cluster on the machine is untouched.
#
#   scripts/local-slurm.sh up DIR     # installs what is missing (root + apt), starts the
#                                     # three daemons, waits for the node; prints
#                                     # `export SLURM_CONF=DIR/slurm.conf`
#   scripts/local-slurm.sh down DIR   # stops every daemon it started in DIR
#   scripts/local-slurm.sh restart-slurmd DIR   # kills slurmd hard and starts it again
#
# Exit status 3 means "cannot run here" (not root, or no apt to install with): the caller
# prints its SKIPPED line, or fails under CI=true.
set -euo pipefail

usage() {
  echo "usage: $0 up|down|restart-slurmd DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
conf=$dir/slurm.conf
node=$(hostname -s)
# Ports away from Slurm's defaults (6817/6818), so a real cluster on the machine is not hit.
ctld_port=${NINJAZERO_SLURMCTLD_PORT:-16817}
slurmd_port=${NINJAZERO_SLURMD_PORT:-16818}

install_missing() {
  local missing=()
  command -v slurmctld >/dev/null || missing+=(slurmctld)
  command -v slurmd >/dev/null || missing+=(slurmd)
  command -v sbatch >/dev/null || missing+=(slurm-client)
  command -v munged >/dev/null || missing+=(munge)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "local-slurm: ${missing[*]} missing and cannot be installed here (needs root and apt-get)" >&2
    exit 3
  fi
  echo "local-slurm: installing ${missing[*]} from Debian's packages" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >"$dir/apt.log" 2>&1 || {
    apt-get update -q >>"$dir/apt.log" 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >>"$dir/apt.log" 2>&1
  } || {
    tail -20 "$dir/apt.log" >&2
    exit 1
  }
}

write_config() {
  local cpus memory
  cpus=$(nproc)
  memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10))
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  cat >"$conf" <<EOF
# Written by scripts/local-slurm.sh: a one-node test cluster.
ClusterName=ninjazero-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups or systemd: plain process tracking, no task binding, no accounting daemon.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
# Test jobs last seconds: look at the queue (dependencies, requeued jobs) every second.
SchedulerParameters=bf_interval=1,sched_interval=1,sched_min_interval=100000
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# A node that comes back after slurmd died takes jobs again by itself.
ReturnToService=2
JobRequeue=1
MpiDefault=none
SwitchType=switch/none
SlurmdTimeout=30
InactiveLimit=0
# Finished jobs stay visible to scontrol for 10 minutes (there is no accounting database).
MinJobAge=600
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  if ! runuser -u munge -- test -x "$dir"; then
    echo "local-slurm: the munge user cannot enter $dir; give it a path every user may traverse" >&2
    exit 1
  fi
  mkdir -p "$dir/munge"
  chown munge:munge "$dir/munge"
  chmod 755 "$dir/munge"
  runuser -u munge -- munged --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed"
}

start_slurmd() {
  slurmd -f "$conf" -N "$node"
}

wait_for_node() {
  for _ in $(seq 1 60); do
    # Responding (no `*`) and taking jobs: idle, mixed, allocated or completing.
    if SLURM_CONF=$conf sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated|completing)$'; then
      return 0
    fi
    sleep 0.5
  done
  echo "local-slurm: the node did not come up (state: $(SLURM_CONF=$conf sinfo -h -N -o '%T' 2>&1)); see $dir/log" >&2
  tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
  return 1
}

stop_pidfile() {
  local pidfile=$1
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

case $action in
  up)
    install_missing
    write_config
    start_munge
    slurmctld -f "$conf"
    start_slurmd
    wait_for_node
    echo "export SLURM_CONF=$conf"
    ;;
  down)
    stop_pidfile "$dir/slurmd.pid"
    stop_pidfile "$dir/slurmctld.pid"
    stop_pidfile "$dir/munge/munged.pid"
    ;;
  restart-slurmd)
    [ -f "$dir/slurmd.pid" ] && kill -9 "$(cat "$dir/slurmd.pid")" 2>/dev/null || true
    rm -f "$dir/slurmd.pid"
    sleep 1
    start_slurmd
    wait_for_node
    ;;
  *) usage ;;
esac
