#!/usr/bin/env bash
# KV-cache events (issue #39): a real ZMQ subscriber (tests/tools/kv_events_subscriber.py, Debian's
# python3-zmq and python3-msgpack) decodes every batch as vLLM's format defines it and rebuilds,
# from the events alone, exactly the multiset of cached block hashes the server reports
# (GET /debug/kv-cache/blocks), over a workload with prefix hits, evictions under a small cache,
# preemptions and LoRA requests, after dropping 100 batches and recovering them by replay. Bad
# --kv-events-config values stop the server before it listens, naming the flag; a subscriber
# that never reads does not hold up serving. Endpoints are ipc:// sockets in the test's own
# directory: no port to collide with.
source "$(dirname "$0")/lib/server.bash" "$@"
PY=/usr/bin/python3
if ! "$PY" -c "import zmq, msgpack, torch" 2>/dev/null; then
  fail "$PY cannot import zmq, msgpack and torch (apt-get install python3-zmq python3-msgpack python3-torch)"
  finish
fi
J=(-H 'Content-Type: application/json')

# Bad configs: exit 2 before listening, naming the flag and what is wrong.
bad_config() {  # bad_config NAME JSON WORD: the error also names WORD
  local rc=0
  "$BIN" serve --model "$MODEL" --port 0 --kv-events-config "$2" >"$WORK/bad.log" 2>&1 || rc=$?
  check "$1: exits 2" "$rc" = 2
  check "$1: names --kv-events-config and $3" \
    "$(grep -c -- "--kv-events-config.*$3" "$WORK/bad.log")" -ge 1
}
bad_config "not JSON" '{"enable_kv_cache_events": tru' "JSON"
bad_config "not an object" '[1, 2]' "object"
bad_config "unknown publisher" '{"enable_kv_cache_events": true, "publisher": "kafka"}' "publisher"
bad_config "unknown field" '{"enable_kv_cache_events": true, "endpiont": "tcp://*:1"}' "endpiont"
bad_config "endpoint ZMQ cannot bind" '{"enable_kv_cache_events": true, "endpoint": "tcp://*:notaport"}' "endpoint"
bad_config "replay endpoint ZMQ cannot bind" \
  "{\"enable_kv_cache_events\": true, \"endpoint\": \"ipc://$WORK/ok.sock\", \"replay_endpoint\": \"nope://x\"}" "replay_endpoint"
bad_config "buffer_steps 0" '{"enable_kv_cache_events": true, "buffer_steps": 0}' "buffer_steps"

# LoRA adapters for the tiny model, written by PyTorch.
FX="$WORK/adapters"
lora_adapters "$FX" || {
  fail "make_lora_adapters.py"
  finish
}

EP="ipc://$WORK/kv-events.sock"
RP="ipc://$WORK/kv-replay.sock"
CONFIG="{\"enable_kv_cache_events\": true, \"publisher\": \"zmq\", \"endpoint\": \"$EP\", \"replay_endpoint\": \"$RP\", \"topic\": \"kv-events\", \"buffer_steps\": 10000}"
# 40 blocks of 16 tokens against 6 sequences of ~240 tokens: evictions and preemptions.
start_server events --kv-events-config "$CONFIG" --num-blocks 40 --block-size 16 --max-num-seqs 6 \
  --max-loras 1 --lora-modules alpha="$FX/alpha"
check "the start-up log says where events go" "$(grep -c "^kv events: publishing on $EP" "$WORK/server-events.log")" = 1

"$PY" "$ROOT/tests/tools/kv_events_subscriber.py" "$EP" "$RP" kv-events "$URL" \
  "$WORK/sub.ready" "$WORK/sub.stop" --drop-from 20 --drop-count 100 >"$WORK/sub.out" 2>&1 &
sub=$!
for _ in $(seq 1 300); do [[ -f "$WORK/sub.ready" ]] && break; sleep 0.1; done
check "the subscriber connected" "$([[ -f "$WORK/sub.ready" ]] && echo yes)" = yes

# Three long shared system prompts (prefix hits), many users, a third of them on the adapter.
request() {  # request I [LORA]: one chat request (every third on adapter alpha); prints its status
  local i=$1 model=""
  ((i % 3 == 0)) && [[ -n "${2:-}" ]] && model="\"model\":\"$2\","

  local sys
  sys=$(printf 'You are assistant number %d of our team. %.0s' $((i % 3)) $(seq 1 12))
  curl -s -o /dev/null -w '%{http_code}\n' --max-time 300 "${J[@]}" -d "{$model
    \"messages\":[{\"role\":\"system\",\"content\":\"$sys\"},{\"role\":\"user\",\"content\":\"question $i\"}],
    \"max_tokens\":100,\"ignore_eos\":true,\"temperature\":0}" "$URL/v1/chat/completions"
}
for wave in 1 2 3; do
  pids=()
  for i in $(seq 1 12); do
    request $((wave * 100 + i)) alpha >>"$WORK/codes" &
    pids+=($!)
  done
  wait "${pids[@]}" || true
done
check "all 36 requests were served" "$(grep -c '^200$' "$WORK/codes")" = 36
check "the workload preempted" "$(metric pagedserve_num_preemptions_total | cut -d. -f1)" -gt 0
check "the workload hit the prefix cache" "$(metric pagedserve_prefix_cache_hits_total | cut -d. -f1)" -gt 0
check "batches were published" "$(metric pagedserve_kv_events_batches_total)" -gt 120
check "none was dropped by the publisher" "$(metric pagedserve_kv_events_dropped_total)" = 0

touch "$WORK/sub.stop"
rc=0
wait "$sub" || rc=$?
result=$(tail -n 1 "$WORK/sub.out")
echo "subscriber: $result"
field() { "$PY" -c "import json,sys; print(json.loads(sys.argv[1]).get('$1'))" "$result" 2>/dev/null; }
check "the subscriber exited 0" "$rc" = 0
check "events rebuild exactly the cached block hashes" "$(field ok)" = True
check "it dropped 100 batches" "$(field dropped)" = 100
check "... and replay recovered them" "$(field replayed)" -ge 100
check "evictions were published (BlockRemoved)" "$(field removed_events)" -gt 0
check "LoRA blocks carry a lora_id" "$(field lora_stored)" -gt 0
check "chained blocks carry their parent" "$(field with_parent)" -gt 0
check "block_size is the server's" "$(field block_sizes)" = "[16]"

# Unknown debug route without events; with them, bad input on the route is still JSON.
start_server plain
check "/debug/kv-cache/blocks is 404 without --kv-events-config" \
  "$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/kv-cache/blocks")" = 404
stop_server "$SERVER_PID" TERM 30

# A subscriber that connects and never reads: serving goes on (PUB drops at its high-water mark).
EP2="ipc://$WORK/kv-events2.sock"
start_server deaf --kv-events-config "{\"enable_kv_cache_events\": true, \"endpoint\": \"$EP2\", \"hwm\": 4}" \
  --num-blocks 64 --block-size 16
"$PY" -c "
import sys, time, zmq
s = zmq.Context().socket(zmq.SUB)
s.setsockopt(zmq.RCVHWM, 1)
s.connect(sys.argv[1])
s.setsockopt_string(zmq.SUBSCRIBE, '')
time.sleep(600)" "$EP2" &
deaf=$!
: >"$WORK/codes2"
pids=()
for i in $(seq 1 16); do
  request "$i" >>"$WORK/codes2" &
  pids+=($!)
done
wait "${pids[@]}" || true
check "16 requests served beside a subscriber that never reads" "$(grep -c '^200$' "$WORK/codes2")" = 16
kill "$deaf" 2>/dev/null || true
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0 with a publisher running" "$STOP_RC" = 0

finish
