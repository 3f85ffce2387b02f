#!/usr/bin/env bash
# Does placing requests by the replicas' KV-cache events beat nginx? (issue #39). N replicas of
# one model, each with a KV cache too small for every tenant's system prompt, serve the same
# multi-tenant workload (bench/routing/tenant_workload.py) three times:
#   least_conn  nginx, fewest open connections (scripts/serve-cluster.sh's default)
#   session     nginx, consistent hash of X-Session-ID (one user's turns stick to a replica)
#   kv-events   bench/routing/kv_event_router.py: a test harness standing in for llm-d's /
#               Dynamo's routers (neither runs here), which reads every replica's KV-cache
#               events and sends a request where the longest run of its prompt is cached
# and prints, per policy, the prefix-cache hit rate over all replicas (hit tokens / looked-up
# prompt tokens, from /metrics) and the client's time to first token p50 / p99.
#
#   bash bench/prefix_routing.sh [MODEL (models/tiny)] [REPLICAS (2)]
# Environment: TENANTS (6) USERS (48) REQUESTS (192) CLIENTS (8) PROMPT_WORDS (500)
#   NUM_BLOCKS (160 per replica) BASE_PORT (18100)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$root/models/tiny}
n=${2:-2}
bin=$root/build/app/pagedserve
PY=/usr/bin/python3
port=${BASE_PORT:-18100}
blocks=${NUM_BLOCKS:-160}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
workload=("${TENANTS:-6}" "${USERS:-48}" "${REQUESTS:-192}" "${CLIENTS:-8}" "${PROMPT_WORDS:-500}")
replica_flags=(--model "$model" --num-blocks "$blocks" --block-size 16 --max-num-seqs 8)

wait_health() {
  for _ in $(seq 1 1200); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1/health")" == 200 ]] && return 0
    sleep 0.1
  done
  echo "prefix_routing: $1 never became healthy" >&2
  exit 1
}
sum_metric() {  # sum_metric NAME PORT...: the metric summed over replicas
  local name=$1 total=0 v
  shift
  for p in "$@"; do
    v=$(curl -s "http://127.0.0.1:$p/metrics" | awk -v n="$name" '$1 == n { print $2 }')
    total=$(python3 -c "print($total + ${v:-0})")
  done
  echo "$total"
}
run_policy() {  # run_policy NAME URL REPLICA_PORTS...: the workload, then one table row
  local name=$1 url=$2
  shift 2
  local q0 h0 q1 h1 out
  q0=$(sum_metric pagedserve_prefix_cache_queries_total "$@")
  h0=$(sum_metric pagedserve_prefix_cache_hits_total "$@")
  out=$("$PY" "$root/bench/routing/tenant_workload.py" "$url" "${workload[@]}")
  q1=$(sum_metric pagedserve_prefix_cache_queries_total "$@")
  h1=$(sum_metric pagedserve_prefix_cache_hits_total "$@")
  python3 -c "
import json, sys
r = json.loads(sys.argv[1]); q = float(sys.argv[3]) - float(sys.argv[2]); h = float(sys.argv[5]) - float(sys.argv[4])
print(f'| {sys.argv[6]:<10} | {h / q:6.1%} | {r[\"ttft_p50_s\"] * 1000:8.0f} ms | {r[\"ttft_p99_s\"] * 1000:8.0f} ms | {r[\"n\"]} ok |')
" "$out" "$q0" "$q1" "$h0" "$h1" "$name"
}

echo "prefix_routing: $n replicas of $model, $blocks blocks of 16 each; workload tenants/users/requests/clients/words = ${workload[*]}"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "| policy     | hit rate | TTFT p50    | TTFT p99    | requests |"
echo "|------------|----------|-------------|-------------|----------|"
for balance in least_conn session; do
  CLUSTER_PORT=$port CLUSTER_BALANCE=$balance CLUSTER_DIR="$work/$balance" \
    bash "$root/scripts/serve-cluster.sh" "$n" "${replica_flags[@]}" >"$work/$balance.log" 2>&1 &
  pids+=($!)
  wait_health "http://127.0.0.1:$port"
  ports=()
  for i in $(seq 1 "$n"); do ports+=($((port + i))); done
  run_policy "$balance" "http://127.0.0.1:$port" "${ports[@]}"
  kill -TERM "${pids[-1]}"
  wait "${pids[-1]}" 2>/dev/null || true
  unset 'pids[-1]'
done

# kv-events: fresh replicas publishing on ipc sockets, the harness router in front.
ports=()
routes=()
for i in $(seq 1 "$n"); do
  p=$((port + i))
  ep="ipc://$work/events-$i.sock"
  "$bin" serve "${replica_flags[@]}" --host 127.0.0.1 --port "$p" \
    --kv-events-config "{\"enable_kv_cache_events\": true, \"endpoint\": \"$ep\"}" \
    >"$work/replica-$i.log" 2>&1 &
  pids+=($!)
  ports+=("$p")
  routes+=("http://127.0.0.1:$p=$ep")
done
for p in "${ports[@]}"; do wait_health "http://127.0.0.1:$p"; done
"$PY" "$root/bench/routing/kv_event_router.py" "$port" 16 "${routes[@]}" >"$work/router.log" 2>&1 &
pids+=($!)
wait_health "http://127.0.0.1:$port"
run_policy kv-events "http://127.0.0.1:$port" "${ports[@]}"
