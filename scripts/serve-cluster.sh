#!/usr/bin/env bash
# N pagedserve replicas on this machine behind one nginx (Debian's `nginx` package).
#
#   scripts/serve-cluster.sh N [pagedserve serve flags...]      e.g.
#   scripts/serve-cluster.sh 2 --model models/tiny-random --max-num-seqs 32
#
# Replicas listen on 127.0.0.1, ports CLUSTER_PORT+1 .. CLUSTER_PORT+N; nginx listens on
# CLUSTER_HOST:CLUSTER_PORT and prints that URL once every replica is healthy. Ctrl-C or SIGTERM
# stops nginx, then every replica (each finishes its streams, --shutdown-timeout). A replica that
# exits alone leaves the rest serving.
# Environment:
#   CLUSTER_PORT     nginx's port (8000); replicas take the N ports after it
#   CLUSTER_HOST     nginx's address (127.0.0.1)
#   CLUSTER_BALANCE  least_conn (default) or session (consistent hash of X-Session-ID)
#   CLUSTER_DIR      where the config, logs and pids go (a new temp dir, removed at exit)
#   PAGEDSERVE       the binary (build/app/pagedserve);  NGINX  nginx (nginx)
# This is one machine's worth of replicas: not a multi-node router (README, "Several replicas").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-}
if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/serve-cluster.sh N [pagedserve serve flags...]  (N replicas, N >= 1)" >&2
  exit 2
fi
shift
for a in "$@"; do
  case "$a" in
    --port | --port=* | --host | --host=*)
      echo "serve-cluster.sh: do not pass $a; set CLUSTER_PORT / CLUSTER_HOST instead" >&2
      exit 2 ;;
  esac
done
port=${CLUSTER_PORT:-8000}
host=${CLUSTER_HOST:-127.0.0.1}
balance=${CLUSTER_BALANCE:-least_conn}
bin=${PAGEDSERVE:-$root/build/app/pagedserve}
nginx_bin=${NGINX:-nginx}
command -v "$nginx_bin" >/dev/null || {
  echo "serve-cluster.sh: nginx not found: apt-get install nginx (or set NGINX=)" >&2
  exit 2
}
[[ -x "$bin" ]] || { echo "serve-cluster.sh: $bin is not built (set PAGEDSERVE=)" >&2; exit 2; }
own_dir=0
if [[ -n "${CLUSTER_DIR:-}" ]]; then
  dir=$CLUSTER_DIR
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/pagedserve-cluster.XXXXXX")
  own_dir=1
fi

pids=()
nginx_pid=""
stopping=0
stop_all() {
  ((stopping)) && return
  stopping=1
  # nginx first (fast shutdown), so no new request reaches a replica that is stopping.
  [[ -n "$nginx_pid" ]] && kill -TERM "$nginx_pid" 2>/dev/null || true
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  [[ -n "$nginx_pid" ]] && wait "$nginx_pid" 2>/dev/null || true
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if ((own_dir)); then rm -rf "$dir"; fi
}
trap 'stop_all; exit 0' INT TERM
trap 'stop_all' EXIT

upstreams=()
for i in $(seq 1 "$n"); do
  p=$((port + i))
  "$bin" serve --host 127.0.0.1 --port "$p" "$@" >"$dir/replica-$i.log" 2>&1 &
  pids+=($!)
  echo $! >"$dir/replica-$i.pid"
  upstreams+=(--upstream "127.0.0.1:$p")
done
for i in $(seq 1 "$n"); do
  p=$((port + i))
  for _ in $(seq 1 1200); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$p/health")" == 200 ]] && break
    if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null; then
      echo "serve-cluster.sh: replica $i (port $p) exited:" >&2
      tail -n 20 "$dir/replica-$i.log" >&2
      exit 1
    fi
    sleep 0.1
  done
done
"$root/deploy/nginx/render.sh" --prefix "$dir" --listen "$host:$port" --balance "$balance" \
  "${upstreams[@]}" >"$dir/nginx.conf"
"$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
nginx_pid=$!
echo "$nginx_pid" >"$dir/nginx.pid.child"
for _ in $(seq 1 100); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$host:$port/health")" == 200 ]] && break
  if ! kill -0 "$nginx_pid" 2>/dev/null; then
    echo "serve-cluster.sh: nginx exited:" >&2
    cat "$dir/error.log" >&2 || true
    exit 1
  fi
  sleep 0.1
done
echo "cluster: http://$host:$port ($n replicas on ports $((port + 1))-$((port + n)), balance $balance; logs in $dir)"
# A replica that stops (crashed, or drained after its own SIGTERM) leaves the others serving:
# nginx moves its traffic to them. The cluster ends (status 1) when nginx or the last replica does.
while :; do
  alive=()
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
  if ! kill -0 "$nginx_pid" 2>/dev/null || ((${#alive[@]} == 0)); then break; fi
  wait -n "${alive[@]}" "$nginx_pid" || true
  ((stopping)) && exit 0
  for i in $(seq 1 "$n"); do
    p=${pids[$((i - 1))]}
    if [[ " ${alive[*]} " == *" $p "* ]] && ! kill -0 "$p" 2>/dev/null; then
      echo "serve-cluster.sh: replica $i (port $((port + i))) exited; the others keep serving" >&2
    fi
  done
done
((stopping)) && exit 0
echo "serve-cluster.sh: nginx or the last replica exited; stopping the cluster" >&2
exit 1
