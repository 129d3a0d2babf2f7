#!/bin/bash
# An emulated cluster on one machine: N "hosts", each a network namespace with one veth on
# a bridge that lives in a switch namespace of its own, one address each from
# 198.18.0.0/15 (no other address, no default route), links shaped with tc (tbf/htb: this
# kernel has no netem, so rates only), one Ray node per host (head on host 0, the others
# one after another: two `ray start` at once collide on socket files) with token
# authentication, and a Mooncake master (and, with WM_STORE_BYTES, a store holder) on
# host 0. Every process gets its own HOME and temp dir; everything is torn down by PID and
# namespace (never `ray stop`, which kills every Ray process on the machine).
#
#   scripts/hosts.sh up N            namespaces, Ray, the Store master (stale ones of the
#                                    prefix are removed first); prints the state dir
#   scripts/hosts.sh net N           namespaces only
#   scripts/hosts.sh down            every process of the hosts, the veths, the namespaces
#   scripts/hosts.sh shape RATE [H]  each host's (or host H's) link, both directions (tbf)
#   scripts/hosts.sh shape-pair S D RATE   host S -> host D only (htb + u32)
#   scripts/hosts.sh unshape         remove every shaping
#   scripts/hosts.sh link H up|down  take host H's link down (or up again)
#   scripts/hosts.sh kill H          kill every process of host H (a crashed host)
#   scripts/hosts.sh ray-node H      start host H's Ray node again
#   scripts/hosts.sh exec H CMD...   run CMD in host H with the cluster's environment
#   scripts/hosts.sh status          addresses, qdiscs, processes
#
# Configuration (environment):
#   WM_HOSTS_PREFIX  namespace prefix (default wm): hosts PREFIX0.., switch PREFIXsw
#   WM_HOSTS_NET     the hosts' /24, three octets inside 198.18.0.0/15 (default 198.18.0)
#   WM_HOSTS_DIR     state dir: tokens, logs, pids, homes, temp dirs (default /tmp/PREFIX-hosts)
#   WM_PYTHON        the Python with ray and mooncake (default: python3)
#   WM_RAY_CPUS      CPUs each Ray node announces (default 4)
#   WM_STORE_BYTES   a Mooncake store holder of this many bytes on host 0 (default 0: none)
#   WM_RAY_SYSTEM_CONFIG  Ray _system_config JSON for the head (default: a node is dead after 10 missed 1 s health checks,
#                    detection, see docs/ray.md)
set -euo pipefail

P=${WM_HOSTS_PREFIX:-wm}
NET=${WM_HOSTS_NET:-198.18.0}
DIR=${WM_HOSTS_DIR:-/tmp/$P-hosts}
PY=${WM_PYTHON:-python3}
SW=${P}sw
BR=br0
GCS_PORT=6379
MASTER_PORT=50051
NODE_DEATH='{"health_check_period_ms":1000,"health_check_timeout_ms":1000,"health_check_failure_threshold":10}'
SYSTEM_CONFIG=${WM_RAY_SYSTEM_CONFIG:-$NODE_DEATH}

case "$NET" in
  198.18.*|198.19.*) ;;
  *) echo "WM_HOSTS_NET must lie in 198.18.0.0/15, not $NET" >&2; exit 2 ;;
esac

addr() { echo "$NET.$(( $1 + 1 ))"; }
hosts() { ip netns list | awk '{print $1}' | grep -E "^${P}[0-9]+$" | sort -V || true; }
count() { hosts | wc -l; }

# The environment of every process of the cluster: the token, no usage reports, its own
# HOME and temp dir (name: $1).
cluster_env() {
  local name=$1
  mkdir -p "$DIR/home/$name" "$DIR/tmp/$name"
  echo HOME="$DIR/home/$name" TMPDIR="$DIR/tmp/$name" RAY_AUTH_MODE=token \
    RAY_AUTH_TOKEN_PATH="$DIR/token" RAY_USAGE_STATS_ENABLED=0 \
    WM_HOSTS_DIR="$DIR" WM_HOSTS_PREFIX="$P" WM_HOSTS_NET="$NET" \
    WM_RAY_ADDRESS="$(addr 0):$GCS_PORT" WM_STORE_MASTER="$(addr 0):$MASTER_PORT"
}

# Starts a long-lived process in host $1 (name $2, logs in $DIR/logs/$2.log, pid recorded).
spawn() {
  local host=$1 name=$2; shift 2
  mkdir -p "$DIR/logs" "$DIR/pids"
  # shellcheck disable=SC2046
  ip netns exec "$P$host" env $(cluster_env "$name") setsid "$@" \
    >"$DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/pids/$name"
}

net_up() {
  local n=$1
  net_down
  ip netns add "$SW"
  ip -n "$SW" link set lo up
  ip -n "$SW" link add "$BR" type bridge
  ip -n "$SW" link set "$BR" up
  for i in $(seq 0 $(( n - 1 ))); do
    local h=$P$i
    ip netns add "$h"
    ip -n "$SW" link add "${h}p" type veth peer name eth0 netns "$h"
    ip -n "$SW" link set "${h}p" master "$BR" up
    ip -n "$h" addr add "$(addr "$i")/24" dev eth0
    ip -n "$h" link set eth0 up
    ip -n "$h" link set lo up
  done
}

# Every process in the hosts' namespaces, then the veths (deleting a namespace destroys
# its veth asynchronously), then the namespaces and the state dir.
net_down() {
  local pids
  pids=$(for h in $(hosts) $(ip netns list | awk '{print $1}' | grep -x "$SW" || true); do ip netns pids "$h"; done)
  if [ -n "$pids" ]; then
    kill $pids 2>/dev/null || true
    for _ in $(seq 50); do
      pids=$(for h in $(hosts); do ip netns pids "$h"; done)
      [ -z "$pids" ] && break
      sleep 0.1
    done
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(for h in $(hosts); do ip netns pids "$h"; done)" ] && break
      sleep 0.1
    done
  fi
  for h in $(hosts); do
    ip -n "$SW" link del "${h}p" 2>/dev/null || true
    ip netns del "$h"
  done
  ip netns del "$SW" 2>/dev/null || true
  # The processes' own files: sockets, session dirs, logs.
  case "$DIR" in /tmp/*|/var/tmp/*) rm -rf "$DIR" ;; esac
}

ray_up() {
  local n=$1
  mkdir -p "$DIR"
  ( umask 077; "$PY" -c 'import secrets; print(secrets.token_hex(32))' >"$DIR/token" )
  local ray=(-m ray.scripts.scripts start --block --disable-usage-stats
             --num-cpus="${WM_RAY_CPUS:-4}" --object-store-memory=100000000)
  spawn 0 ray-head "$PY" "${ray[@]}" --head --include-dashboard=false --node-ip-address="$(addr 0)" --port=$GCS_PORT \
    --temp-dir="$DIR/ray" --resources='{"host0":1}' --system-config="$SYSTEM_CONFIG"
  wait_port 0 $GCS_PORT ray-head
  for i in $(seq 1 $(( n - 1 ))); do
    spawn "$i" "ray-$i" "$PY" "${ray[@]}" --address="$(addr 0):$GCS_PORT" \
      --node-ip-address="$(addr "$i")" --resources="{\"host$i\":1}"
    wait_nodes $(( i + 1 ))
  done
}

# Waits until host $1 listens on port $2 (process $3 still alive).
wait_port() {
  for _ in $(seq 300); do
    if ip netns exec "$P$1" "$PY" -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('$(addr "$1")', $2)))" 2>/dev/null; then
      return 0
    fi
    kill -0 "$(cat "$DIR/pids/$3")" 2>/dev/null || { echo "$3 exited; see $DIR/logs/$3.log" >&2; tail -5 "$DIR/logs/$3.log" >&2; return 1; }
    sleep 0.1
  done
  echo "$3 did not listen on $(addr "$1"):$2" >&2
  return 1
}

# Waits until the cluster has $1 live nodes.
wait_nodes() {
  # shellcheck disable=SC2046
  ip netns exec "${P}0" env $(cluster_env probe) "$PY" - "$1" <<'EOF'
import os, sys, time
from ray._raylet import GcsClient  # noqa: the GCS's own client: no driver, no job
want = int(sys.argv[1])
client = GcsClient(address=os.environ["WM_RAY_ADDRESS"])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    alive = [n for n in client.get_all_node_info(timeout=5).values() if n.state == 0]
    if len(alive) >= want:
        sys.exit(0)
    time.sleep(0.1)
sys.exit(f"the cluster has {len(alive)} nodes, expected {want}")
EOF
}

store_up() {
  local master
  master=$("$PY" -c 'import mooncake, os; print(os.path.join(os.path.dirname(mooncake.__file__), "mooncake_master"))')
  spawn 0 mooncake-master "$master" -rpc_address="$(addr 0)" -rpc_port=$MASTER_PORT \
    -metrics_host="$(addr 0)" -metrics_port=9003
  wait_port 0 $MASTER_PORT mooncake-master
  if [ "${WM_STORE_BYTES:-0}" -gt 0 ]; then
    spawn 0 mooncake-holder "$(dirname "$master")/mooncake_client" \
      -global_segment_size="$WM_STORE_BYTES" -master_server_address="$(addr 0):$MASTER_PORT" \
      -metadata_server=P2PHANDSHAKE -host="$(addr 0)" -protocol=tcp -local_buffer_size=0
  fi
}

shape_host() {
  local h=$P$1 rate=$2
  tc -n "$h" qdisc replace dev eth0 root tbf rate "$rate" burst 256kb latency 50ms
  tc -n "$SW" qdisc replace dev "${h}p" root tbf rate "$rate" burst 256kb latency 50ms
}

case "${1:-}" in
  up)
    n=${2:?usage: hosts.sh up N}
    started=$(date +%s.%N)
    net_up "$n"
    ray_up "$n"
    store_up
    echo "up: $n hosts ($(addr 0)..$(addr $(( n - 1 )))) in $(echo "$(date +%s.%N) - $started" | bc) s; state in $DIR" >&2
    echo "$DIR"
    ;;
  net) net_up "${2:?usage: hosts.sh net N}" ;;
  down)
    started=$(date +%s.%N)
    net_down
    echo "down in $(echo "$(date +%s.%N) - $started" | bc) s" >&2
    ;;
  shape)
    rate=${2:?usage: hosts.sh shape RATE [HOST]}
    if [ -n "${3:-}" ]; then shape_host "$3" "$rate"; else
      for i in $(seq 0 $(( $(count) - 1 ))); do shape_host "$i" "$rate"; done
    fi
    ;;
  shape-pair)
    s=${2:?}; d=${3:?}; rate=${4:?usage: hosts.sh shape-pair S D RATE}; h=$P$s
    tc -n "$h" qdisc replace dev eth0 root handle 1: htb default 10
    tc -n "$h" class replace dev eth0 parent 1: classid 1:10 htb rate 100gbit
    tc -n "$h" class replace dev eth0 parent 1: classid 1:20 htb rate "$rate" ceil "$rate"
    tc -n "$h" filter replace dev eth0 parent 1: protocol ip prio 1 u32 match ip dst "$(addr "$d")/32" flowid 1:20
    ;;
  unshape)
    for h in $(hosts); do
      tc -n "$h" qdisc del dev eth0 root 2>/dev/null || true
      tc -n "$SW" qdisc del dev "${h}p" root 2>/dev/null || true
    done
    ;;
  link) ip -n "$P${2:?}" link set eth0 "${3:?usage: hosts.sh link H up|down}" ;;
  kill)
    # A host crashes: every process in it, at once.
    h=${2:?usage: hosts.sh kill H}
    pids=$(ip netns pids "$P$h")
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    ;;
  ray-node)
    # Start host H's Ray node again (after a kill); waits until the cluster counts N nodes.
    h=${2:?usage: hosts.sh ray-node H}
    spawn "$h" "ray-$h-again-$$" "$PY" -m ray.scripts.scripts start --block --disable-usage-stats \
      --num-cpus="${WM_RAY_CPUS:-4}" --object-store-memory=100000000 --address="$(addr 0):$GCS_PORT" \
      --node-ip-address="$(addr "$h")" --resources="{\"host$h\":1}"
    wait_nodes "$(count)"
    ;;
  exec)
    h=${2:?usage: hosts.sh exec H CMD...}; shift 2
    # shellcheck disable=SC2046
    exec ip netns exec "$P$h" env $(cluster_env "exec-$h-$$") "$@"
    ;;
  status)
    for h in $(hosts); do
      echo "$h: $(ip -n "$h" -br -4 addr show eth0 | awk '{print $2, $3}') $(tc -n "$h" qdisc show dev eth0 | head -1)" \
        "processes: $(ip netns pids "$h" | wc -l)"
    done
    ;;
  *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
