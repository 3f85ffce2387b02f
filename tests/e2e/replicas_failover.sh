#!/usr/bin/env bash
# A replica that gets SIGTERM drains the way a balancer needs: /health and new requests answer
# 503 (with Retry-After, Connection: close) while its in-flight streams finish. Behind nginx, 64
# streams all either complete or end with an error event (none hangs, none is cut silently), and
# requests sent after the signal all succeed on the other replica.
source "$(dirname "$0")/lib/server.bash" "$@"
source "$(dirname "$0")/lib/cluster.bash"
need_nginx
clients="$ROOT/tests/e2e/lib/http_clients.py"

# One replica, one stream in flight, SIGTERM with time enough to finish it. The stream is long
# (1500 tokens, seconds on the tiny model) so it is still running when the checks below ask. The
# drain window is far longer than the stream needs even on a slow, shared CI host: with 60 s, an
# AVX2 host running another test beside this one took longer than that, and the drain then ended
# the stream with an abort event, which is the behaviour of a window too short, not a bug.
start_server drain --shutdown-timeout 600
long='{"prompt":"Count:","max_tokens":1500,"temperature":0,"ignore_eos":true,"stream":true}'
curl -s -N --max-time 600 -H 'Content-Type: application/json' -d "$long" "$URL/v1/completions" \
  >"$WORK/inflight.out" 2>&1 &
curl_pid=$!
for _ in $(seq 1 100); do
  [[ "$(metric pagedserve_num_requests_running)" == 1 ]] && break
  sleep 0.1
done
kill -TERM "$SERVER_PID"
wait_until 30 health_is 503 || true
check "draining: /health answers 503" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/health")" = 503
curl -s -D "$WORK/drain.head" -o "$WORK/drain.body" --max-time 5 -H 'Content-Type: application/json' \
  -d '{"prompt":"x","max_tokens":1}' "$URL/v1/completions" || true
check "draining: a new request gets 503" "$(head -n 1 "$WORK/drain.head" | grep -c ' 503 ')" = 1
check "draining: with Retry-After" "$(grep -ci '^retry-after: [0-9]' "$WORK/drain.head")" = 1
check "draining: with Connection: close (a proxy drops the connection)" "$(grep -ci '^connection: close' "$WORK/drain.head")" = 1
check "draining: an OpenAI error body (code shutting_down)" "$(grep -c '"code":"shutting_down"' "$WORK/drain.body")" = 1
# Without this the checks above could have run against a replica with nothing left to drain.
check "the stream was still in flight when the drain checks ended" "$(grep -c '^data: \[DONE\]' "$WORK/inflight.out")" = 0
stop_server "$SERVER_PID" 0 600
check "the drained replica exits 0" "$STOP_RC" = 0
curl_rc=0
wait "$curl_pid" || curl_rc=$?
check "the in-flight stream finished (curl exit 0)" "$curl_rc" = 0
check "the in-flight stream ran to its end (finish_reason length)" "$(grep -c '"finish_reason":"length"' "$WORK/inflight.out")" = 1
check "the in-flight stream has no error event" "$(grep -c '^data: {"error"' "$WORK/inflight.out")" = 0
check "the in-flight stream ended with [DONE]" "$(grep -c '^data: \[DONE\]' "$WORK/inflight.out")" = 1
check "the drained replica did not say its drain window cut a request" "$(grep -c 'drain window' "$WORK/server-drain.log")" = 0

# Two replicas behind nginx; 64 long streams; SIGTERM replica 1 with a short drain, so some of
# its streams finish and the rest end with an abort error event.
start_cluster failover 2 least_conn --max-num-seqs 64 --shutdown-timeout 2
python3 "$clients" failover "$CLUSTER_URL" 64 --max-tokens 300 --signal-pid "${REPLICA_PIDS[0]}" \
  --watch-url "${REPLICA_URLS[0]}" --after 16 >"$WORK/failover.json"
if python3 - "$WORK/failover.json" <<'PY'; then pass "failover: 64 streams all completed or ended with an error event; all 16 later requests succeeded"; else fail "failover"; fi
import json, sys
r = json.load(open(sys.argv[1]))
print(f"  {r['completed']} completed, {r['ended_with_error_event']} ended with an error event, "
      f"{r['hung_or_cut']} hung or cut; after the signal {r['after_ok']}/{r['after']} ok; "
      f"replica 1 was running {r['running_when_signalled']:.0f} when signalled")
assert r["streams"] == 64 and r["hung_or_cut"] == 0, r["bad_samples"]
assert r["completed"] + r["ended_with_error_event"] == 64, r
assert r["running_when_signalled"] >= 1, r
assert r["after"] == 16 and r["after_ok"] == 16, r["after_bad_samples"]
PY
wait_gone "${REPLICA_PIDS[0]}" 30
check "the signalled replica exited" "$GONE" = 1
check "the signalled replica stopped cleanly" "$(grep -c '^pagedserve: stopped' "$CLUSTER_DIR/replica-1.log")" = 1
# The streams its 2 s window cut are the ones the server's log owns up to.
cut=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ended_with_error_event"])' "$WORK/failover.json")
check "the signalled replica's log says its drain window cut requests iff some were cut" \
  "$(grep -c 'drain window (--shutdown-timeout) ended with [1-9][0-9]* request' "$CLUSTER_DIR/replica-1.log")" = "$((cut > 0 ? 1 : 0))"
check "serve-cluster.sh said so and kept running" \
  "$(grep -c 'replica 1 .* exited; the others keep serving' "$WORK/server-cluster-failover.log"):$(kill -0 "$CLUSTER_PID" 2>/dev/null && echo up)" = "1:up"
check "the other replica is still healthy" "$(curl -s -o /dev/null -w '%{http_code}' "${REPLICA_URLS[1]}/health")" = 200
check "nginx still serves (through replica 2)" "$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  -d '{"prompt":"x","max_tokens":1}' "$CLUSTER_URL/v1/completions")" = 200
# The last replica ending ends the cluster (status 1).
kill -TERM "${REPLICA_PIDS[1]}"
stop_server "$CLUSTER_PID" 0 30
check "serve-cluster.sh exits 1 once no replica is left" "$STOP_RC" = 1
finish
