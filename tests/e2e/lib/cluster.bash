# Shared by tests/e2e/replicas_*.sh and edge_*.sh: replicas behind nginx through
# scripts/serve-cluster.sh (so the script is what the tests exercise), on free loopback ports.
# Source after lib/server.bash. Everything started is stopped by server.bash's cleanup.

need_nginx() {
  if ! command -v nginx >/dev/null 2>&1; then
    fail "nginx is missing: apt-get install nginx (scripts/setup.sh installs it)"
    finish
  fi
}

# A base port P with P..P+count all free on 127.0.0.1 (random, so parallel tests rarely meet).
free_port_run() {
  python3 - "$1" <<'PY'
import random, socket, sys
n = int(sys.argv[1])
for _ in range(200):
    base = random.randint(20000, 60000 - n)
    socks = []
    try:
        for p in range(base, base + n + 1):
            s = socket.socket()
            s.bind(("127.0.0.1", p))
            socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(base)
    break
else:
    sys.exit("no free port run")
PY
}

# start_cluster NAME N BALANCE [serve flags...]: sets CLUSTER_URL, CLUSTER_PID, CLUSTER_DIR,
# REPLICA_URLS[] and REPLICA_PIDS[].
start_cluster() {
  local name=$1 n=$2 balance=$3
  shift 3
  local base
  base=$(free_port_run "$n")
  CLUSTER_DIR="$WORK/cluster-$name"
  mkdir -p "$CLUSTER_DIR"
  : >"$WORK/server-cluster-$name.log"  # exists before the first read (set -e, pipefail)
  CLUSTER_PORT=$base CLUSTER_BALANCE=$balance CLUSTER_DIR=$CLUSTER_DIR PAGEDSERVE=$BIN \
    bash "$ROOT/scripts/serve-cluster.sh" "$n" --model "$MODEL" "$@" \
    >"$WORK/server-cluster-$name.log" 2>&1 &
  CLUSTER_PID=$!
  SERVER_PIDS+=("$CLUSTER_PID")
  CLUSTER_URL=""
  local i
  for i in $(seq 1 1200); do
    CLUSTER_URL=$(sed -n 's/^cluster: \(http:\/\/127\.0\.0\.1:[0-9]*\) .*/\1/p' \
      "$WORK/server-cluster-$name.log" | head -n 1)
    [[ -n "$CLUSTER_URL" ]] && break
    kill -0 "$CLUSTER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z "$CLUSTER_URL" ]]; then
    echo "cluster $name did not start:"
    cat "$WORK/server-cluster-$name.log"
    return 1
  fi
  REPLICA_URLS=()
  REPLICA_PIDS=()
  for i in $(seq 1 "$n"); do
    REPLICA_URLS+=("http://127.0.0.1:$((base + i))")
    REPLICA_PIDS+=("$(cat "$CLUSTER_DIR/replica-$i.pid")")
    SERVER_PIDS+=("${REPLICA_PIDS[-1]}")
  done
}

# stop_cluster: SIGTERM to serve-cluster.sh, which stops nginx and the replicas; sets STOP_RC.
stop_cluster() {
  stop_server "$CLUSTER_PID" TERM 60
}

# wait_gone PID TIMEOUT_S: for a process that is not this shell's child (a replica under
# serve-cluster.sh); sets GONE to 1 when it has exited in time.
wait_gone() {
  local pid=$1 timeout=$2 i
  GONE=0
  for i in $(seq 1 $((timeout * 10))); do
    if ! kill -0 "$pid" 2>/dev/null; then
      GONE=1
      return 0
    fi
    sleep 0.1
  done
}
