#!/usr/bin/env bash
# The server's life: flags checked up front, health while loading and ready, the small
# endpoints, chat template choice, and SIGTERM/SIGINT with requests in flight (exit 0).
source "$(dirname "$0")/lib/server.bash" "$@"

# Bad flags fail at once, naming the flag, before anything listens.
rc=0
"$BIN" serve --model "$MODEL" --port 99999 >"$WORK/badport.log" 2>&1 || rc=$?
check "--port out of range exits 2" "$rc" = 2
check "the message names --port" "$(grep -c -- '--port' "$WORK/badport.log")" -ge 1
rc=0
"$BIN" serve --model "$MODEL" --chat-template jinja >"$WORK/badtmpl.log" 2>&1 || rc=$?
check "unknown --chat-template exits 2" "$rc" = 2
check "the message lists the known templates" "$(grep -c 'chatml, llama3, plain' "$WORK/badtmpl.log")" = 1
rc=0
"$BIN" serve --model "$WORK/no-such-dir" >"$WORK/nodir.log" 2>&1 || rc=$?
check "missing --model dir exits 2" "$rc" = 2

# Health: while loading it may only say 503; once "ready" is printed it says 200.
log="$WORK/server-health.log"
: >"$log"  # exists before the first read (set -e, pipefail)
"$BIN" serve --model "$MODEL" --port 0 >"$log" 2>&1 &
pid=$!
SERVER_PIDS+=("$pid")
url=""
for _ in $(seq 1 600); do
  url=$(sed -n 's/^listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$log" | head -n 1)
  [[ -n "$url" ]] && break
  sleep 0.05
done
first=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url/health")
ready_then=$(grep -c '^ready:' "$log" || true)
if [[ "$first" == 503 || ("$first" == 200 && "$ready_then" == 1) ]]; then
  pass "health before ready is 503 (got $first, ready printed: $ready_then)"
else
  fail "health before ready: got $first, ready printed: $ready_then"
fi
for _ in $(seq 1 600); do
  grep -q '^ready:' "$log" && break
  sleep 0.1
done
check "health after ready is 200" "$(curl -s -o /dev/null -w '%{http_code}' "$url/health")" = 200
check "ready line names the checkpoint's own Jinja template" "$(grep -c 'chat template jinja (.*tokenizer_config.json (chat_template)), reasoning parser none' "$log")" = 1
stop_server "$pid" INT 30
check "SIGINT on an idle server exits 0" "$STOP_RC" = 0

start_server main --served-model-name tiny-test --shutdown-timeout 1
models=$(curl -s "$URL/v1/models")
# OpenMP workers sleep when idle (app/openmp_wait_policy.h): the binary re-executes itself with
# OMP_WAIT_POLICY=passive and GOMP_SPINCOUNT=30000 (a short spin, then sleep), keeping its pid,
# unless the user chose a policy.
check "the server runs with OMP_WAIT_POLICY=passive by default" \
  "$(tr '\0' '\n' <"/proc/$SERVER_PID/environ" | grep -c '^OMP_WAIT_POLICY=passive$')" = 1
check "... and GOMP_SPINCOUNT=30000" \
  "$(tr '\0' '\n' <"/proc/$SERVER_PID/environ" | grep -c '^GOMP_SPINCOUNT=30000$')" = 1
check "/v1/models lists the served name" "$(echo "$models" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["object"], d["data"][0]["id"], d["data"][0]["max_model_len"])')" = "list tiny-test 4096"
tok=$(curl -s -H 'Content-Type: application/json' -d '{"prompt":"Hello world"}' "$URL/tokenize")
ids=$(echo "$tok" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["tokens"]))')
check "/tokenize returns tokens" "$(echo "$tok" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["count"] == len(d["tokens"]) > 0)')" = True
detok=$(curl -s -H 'Content-Type: application/json' -d "{\"tokens\":$ids}" "$URL/detokenize")
check "/detokenize round-trips" "$(echo "$detok" | python3 -c 'import json,sys; print(json.load(sys.stdin)["prompt"])')" = "Hello world"
chat_ids=$(curl -s -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}]}' "$URL/tokenize" |
  python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["tokens"]))')
chat_text=$(curl -s -H 'Content-Type: application/json' -d "{\"tokens\":$chat_ids}" "$URL/detokenize" |
  python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["prompt"]))')
check "/tokenize renders ChatML with the generation prompt" "$chat_text" = \
  '"<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"'
ctype=$(curl -s -o "$WORK/metrics.txt" -w '%{content_type}' "$URL/metrics")
check "/metrics is Prometheus text" "$(echo "$ctype" | grep -c '^text/plain; version=0.0.4')" = 1
for name in pagedserve_num_requests_running pagedserve_num_requests_waiting pagedserve_kv_cache_usage_perc \
  pagedserve_prefix_cache_queries_total pagedserve_prefix_cache_hits_total pagedserve_prompt_tokens_total \
  pagedserve_generation_tokens_total pagedserve_num_preemptions_total pagedserve_max_seqs_in_step \
  pagedserve_time_to_first_token_seconds_count pagedserve_inter_token_latency_seconds_count \
  pagedserve_e2e_request_latency_seconds_count pagedserve_request_queue_time_seconds_count; do
  check "/metrics has $name" "$(grep -c "^$name " "$WORK/metrics.txt")" = 1
done

# SIGTERM with streams in flight: each ends cleanly (abort as an error event, then [DONE]), new
# requests are refused, and the process exits 0. Eight at once: the handlers write their last
# events after the engine has stopped, and a server that closed before they had (httplib's
# stop() ends chunked writers mid-body) cut some of them with no error event.
long='{"prompt":"Count:","max_tokens":3000,"temperature":0,"ignore_eos":true,"stream":true}'
curl_pids=()
for i in 1 2 3 4 5 6 7 8; do
  curl -s -N --max-time 60 -H 'Content-Type: application/json' -d "$long" "$URL/v1/completions" \
    >"$WORK/inflight-$i.out" 2>&1 &
  curl_pids+=($!)
done
for _ in $(seq 1 100); do
  [[ "$(metric pagedserve_num_requests_running)" == 8 ]] && break
  sleep 0.1
done
kill -TERM "$SERVER_PID"
# Until the server has seen the signal, a new request may still be served; wait for the refusal.
refused() {
  after=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
    -d '{"prompt":"x","max_tokens":1}' "$URL/v1/completions" || true)
  [[ "$after" == 503 || "$after" == 000 ]]
}
wait_until 30 refused || true
if [[ "$after" == 503 || "$after" == 000 ]]; then
  pass "requests during shutdown are refused ($after)"
else
  fail "requests during shutdown: got $after"
fi
stop_server "$SERVER_PID" 0 30  # signal 0: the TERM was sent above; a second would force exit 1
check "SIGTERM with 8 requests in flight exits 0" "$STOP_RC" = 0
clean=0 errored=0 done_last=0
for i in 1 2 3 4 5 6 7 8; do
  rc=0
  wait "${curl_pids[$((i - 1))]}" || rc=$?
  [[ "$rc" == 0 ]] && clean=$((clean + 1))
  [[ "$(grep -c '^data: {"error"' "$WORK/inflight-$i.out")" == 1 ]] && errored=$((errored + 1))
  [[ "$(tail -n 2 "$WORK/inflight-$i.out" | grep -c '^data: \[DONE\]')" == 1 ]] && done_last=$((done_last + 1))
done
check "the in-flight streams ended cleanly (curl exit 0)" "$clean" = 8
check "each in-flight stream got an error event" "$errored" = 8
check "each in-flight stream ended with [DONE]" "$done_last" = 8

# --chat-template overrides what tokenizer_config.json says. (Also: a policy the user set is kept.)
OMP_WAIT_POLICY=active start_server plain --chat-template plain
check "a user's OMP_WAIT_POLICY is kept" \
  "$(tr '\0' '\n' <"/proc/$SERVER_PID/environ" | grep -c '^OMP_WAIT_POLICY=active$')" = 1
check "... and no GOMP_SPINCOUNT is added to it" \
  "$(tr '\0' '\n' <"/proc/$SERVER_PID/environ" | grep -c '^GOMP_SPINCOUNT=')" = 0
plain_ids=$(curl -s -H 'Content-Type: application/json' -d '{"messages":[{"role":"user","content":"你好"}]}' \
  "$URL/tokenize" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["tokens"]))')
plain_text=$(curl -s -H 'Content-Type: application/json' -d "{\"tokens\":$plain_ids}" "$URL/detokenize" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["prompt"])')
check "--chat-template plain renders 用户:…\\n助手:" "$plain_text" = $'用户:你好\n助手:'
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0 (plain)" "$STOP_RC" = 0
finish
