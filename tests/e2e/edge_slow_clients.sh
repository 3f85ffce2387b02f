#!/usr/bin/env bash
# The edge holds against slow and many clients (issue #20): 1000 connections that send half a
# request and stall do not queue a normal request behind them (that bug makes it seconds late;
# the bound is 400 ms), with and without nginx in front; 1000 concurrent streaming clients all
# get their responses, both ways. And each rule of the edge on its own: the header deadline
# (408), the body deadline, the caps per client address (429) and in all (an idle connection
# makes room; 503 when all are busy), the keep-alive idle timeout, pipelined requests, an
# oversized head (431), and a low open-file limit.
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/cluster.bash"
need_nginx
clients="$ROOT/tests/e2e/lib/http_clients.py"
cases="$ROOT/tests/e2e/lib/edge_cases.py"

stall_check() {  # stall_check LABEL URL
  # The bug this guards against queues a request behind the stalled connections: it is late by
  # seconds (main eae5ca0: 4.8 s at 300 stalled, 14.8 s at 1000). The bound, 400 ms, is more
  # than 10x below that signature and far above what machine noise adds (2 shared cores, other
  # tests beside this one, a flake hunt's busy loops), so one attempt decides.
  if python3 "$clients" stall "$2" 1000 --probes 5 >"$WORK/stall-$1.json" &&
    python3 - "$WORK/stall-$1.json" "$1" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
print(f"  {sys.argv[2]}: {r['stalled']} stalled connections; worst of 5, before -> while stalled: "
      f"completion {r['baseline_completion_ms']:.1f} -> {r['stalled_completion_ms']:.1f} ms, /health "
      f"{r['baseline_health_ms']:.1f} -> {r['stalled_health_ms']:.1f} ms: delay {r['delay_ms']:.1f} ms")
assert r["stalled"] == 1000, r
assert r["delay_ms"] < 400, r
PY
    pass "$1: 1000 stalled connections do not queue a normal request behind them (delay < 400 ms)"
  else
    fail "$1: 1000 stalled connections: $(head -c 600 "$WORK/stall-$1.json")"
  fi
}
streams_check() {  # streams_check LABEL URL
  if python3 "$clients" streams "$2" 1000 --max-tokens 4 >"$WORK/streams-$1.json" &&
    python3 - "$WORK/streams-$1.json" "$1" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
print(f"  {sys.argv[2]}: {r['completed']}/{r['requests']} streams complete in {r['wall_s']:.1f} s")
assert r["completed"] == r["requests"] == 1000, r["failure_samples"]
PY
    pass "$1: 1000 concurrent streaming clients all get their responses"
  else
    fail "$1: 1000 concurrent streaming clients: $(head -c 600 "$WORK/streams-$1.json")"
  fi
}

# Without nginx: the server itself.
start_server edge
stall_check direct "$URL"
streams_check direct "$URL"
check "no stalled connection is left open afterwards" \
  "$(curl -s "$URL/metrics" | awk '$1 == "pagedserve_http_connections{state=\"reading_head\"}" { print $2 }')" = 0
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0 after the crowd" "$STOP_RC" = 0

# With nginx in front of one replica.
start_cluster edge 1 least_conn
stall_check "through nginx" "$CLUSTER_URL"
streams_check "through nginx" "$CLUSTER_URL"
stop_cluster

# The edge's rules, one at a time.
start_server deadline --header-timeout 1 --body-timeout 1 --http-threads 4
if python3 "$cases" header-timeout "$URL" 20 30; then pass "--header-timeout: an unfinished head gets 408"; else fail "--header-timeout"; fi
check "the timeouts are counted in /metrics" "$(metric pagedserve_http_header_timeouts_total)" -ge 20
# More stalled bodies than workers: each is ended at the deadline, then the server serves again.
if python3 "$cases" body-timeout "$URL" 8 30; then pass "--body-timeout: a stalled body is ended"; else fail "--body-timeout"; fi
check "... and the workers are free again" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
  -d '{"prompt":"x","max_tokens":1}' "$URL/v1/completions")" = 200
stop_server "$SERVER_PID" TERM 30

start_server caps --max-connections-per-client 8
if python3 "$cases" per-client-cap "$URL" 8; then pass "--max-connections-per-client"; else fail "--max-connections-per-client"; fi
check "refusals are counted in /metrics" "$(metric pagedserve_http_connections_refused_total)" -ge 1
if python3 "$cases" pipelined "$URL"; then pass "pipelined requests"; else fail "pipelined requests"; fi
if python3 "$cases" huge-head "$URL"; then pass "an oversized request head"; else fail "an oversized request head"; fi
if python3 "$cases" keep-alive "$URL" 2.5 open; then pass "keep-alive (default 75 s): open after 2.5 s idle"; else fail "keep-alive default"; fi
stop_server "$SERVER_PID" TERM 30

start_server total --max-connections 16 --keep-alive-timeout 1
if python3 "$cases" total-cap "$URL" 16; then pass "--max-connections"; else fail "--max-connections"; fi
check "evictions are counted in /metrics" "$(metric pagedserve_http_connections_evicted_total)" -ge 1
if python3 "$cases" keep-alive "$URL" 30 closed; then pass "--keep-alive-timeout 1 closes an idle connection (waited at most 30 s)"; else fail "--keep-alive-timeout"; fi
stop_server "$SERVER_PID" TERM 30

# A low open-file limit: the server says how many connections it can hold, and still serves.
: >"$WORK/server-lowfd.log"  # exists before the first read (set -e, pipefail)
(ulimit -n 256 && exec "$BIN" serve --model "$MODEL" --host 127.0.0.1 --port 0) >"$WORK/server-lowfd.log" 2>&1 &
pid=$!
SERVER_PIDS+=("$pid")
url=""
for _ in $(seq 1 600); do
  url=$(sed -n 's/^listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$WORK/server-lowfd.log" | head -n 1)
  [[ -n "$url" ]] && grep -q '^ready:' "$WORK/server-lowfd.log" && break
  sleep 0.1
done
check "a low open-file limit lowers the connection cap, and says so" \
  "$(grep -c 'the open-file limit is 256; serving at most 128 connections' "$WORK/server-lowfd.log")" = 1
check "... and the server still serves" "$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  -d '{"prompt":"x","max_tokens":1}' "$url/v1/completions")" = 200
if python3 "$clients" stall "$url" 300 --probes 3 >"$WORK/stall-lowfd.json" 2>&1 &&
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["delay_ms"] < 400, r' "$WORK/stall-lowfd.json"; then
  pass "... and 300 stalled connections past its cap do not queue a normal request (delay < 400 ms)"
else
  fail "low open-file limit with 300 stalled: $(head -c 400 "$WORK/stall-lowfd.json")"
fi
stop_server "$pid" TERM 30
check "SIGTERM exits 0 (low open-file limit)" "$STOP_RC" = 0
finish
