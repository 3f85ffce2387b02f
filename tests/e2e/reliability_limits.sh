#!/usr/bin/env bash
# Limits, auth, CORS and draining shutdown (issue #8): --max-tokens-limit, --max-model-len,
# --request-timeout, --api-key with --metrics-require-key, --allowed-origins, and SIGTERM that
# lets a running request finish within --shutdown-timeout and exits 0.
source "$(dirname "$0")/lib/server.bash" "$@"

status() { curl -s -o "$WORK/body" -w '%{http_code}' --max-time 60 "$@" || true; }
J=(-H 'Content-Type: application/json')
field() { python3 -c "import json,sys; d=json.load(open('$WORK/body')); print($1)"; }

# Bad values of the new flags fail before anything listens, naming the flag.
rc=0
"$BIN" serve --model "$MODEL" --metrics-require-key >"$WORK/nokey.log" 2>&1 || rc=$?
check "--metrics-require-key without --api-key exits 2" "$rc" = 2
rc=0
"$BIN" serve --model "$MODEL" --allowed-origins example.com >"$WORK/badorigin.log" 2>&1 || rc=$?
check "--allowed-origins without a scheme exits 2" "$rc" = 2
check "the message names --allowed-origins" "$(grep -c -- '--allowed-origins' "$WORK/badorigin.log")" -ge 1

# start_keyed NAME FLAGS...: like start_server, but /health needs the key, so "ready" in the log
# (printed once the model is loaded) is what we wait for.
start_keyed() {
  local name=$1 log="$WORK/server-$1.log" i
  shift
  : >"$log"  # exists before the first read (set -e, pipefail)
  "$BIN" serve --model "$MODEL" --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  SERVER_PIDS+=("$SERVER_PID")
  for i in $(seq 1 1200); do
    grep -q '^ready:' "$log" && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  URL=$(sed -n 's/^listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$log" | head -n 1)
  grep -q '^ready:' "$log" || { cat "$log"; return 1; }
}

start_keyed limits --max-tokens-limit 8 --max-model-len 64 --request-timeout 1.5 \
  --api-key k1 --metrics-require-key --allowed-origins 'http://ok.example, http://two.example:3000'
A=(-H 'Authorization: Bearer k1')
check "/health needs the key (--metrics-require-key)" "$(status "$URL/health")" = 401
check "/metrics needs the key" "$(status "$URL/metrics")" = 401
check "/health with the key" "$(status "${A[@]}" "$URL/health")" = 200
check "/metrics with the key" "$(status "${A[@]}" "$URL/metrics")" = 200
check "/v1 without the key" "$(status "$URL/v1/models")" = 401

check "max_tokens over --max-tokens-limit is 400" \
  "$(status "${A[@]}" "${J[@]}" -d '{"prompt":"hi","max_tokens":9}' "$URL/v1/completions")" = 400
check "the message names --max-tokens-limit" "$(grep -c -- '--max-tokens-limit' "$WORK/body")" = 1
check "max_tokens at the limit is served" \
  "$(status "${A[@]}" "${J[@]}" -d '{"prompt":"hi","max_tokens":8,"ignore_eos":true}' "$URL/v1/completions")" = 200
check "chat without max_tokens is cut to the limit" \
  "$(status "${A[@]}" "${J[@]}" -d '{"messages":[{"role":"user","content":"hi"}],"ignore_eos":true}' \
    "$URL/v1/chat/completions")/$(field 'd["usage"]["completion_tokens"]')" = 200/8
ids=$(python3 -c 'print(",".join(["7"] * 60))')
check "prompt + max_tokens past --max-model-len 64 is 400" \
  "$(status "${A[@]}" "${J[@]}" -d "{\"prompt\":[$ids],\"max_tokens\":8}" "$URL/v1/completions")" = 400
check "the message says 64" "$(grep -c 'maximum context length is 64' "$WORK/body")" = 1

stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0 (limits)" "$STOP_RC" = 0

start_server timeout --request-timeout 0.3 --max-num-seqs 1
long='"prompt":"Count:","max_tokens":4000,"ignore_eos":true,"temperature":0'
code=$(status "${J[@]}" -d "{$long}" "$URL/v1/completions")
check "a whole response past --request-timeout is 408" "$code" = 408
check "the message names --request-timeout" "$(grep -c -- '--request-timeout' "$WORK/body")" = 1
curl -s -N --max-time 60 "${J[@]}" -d "{$long,\"stream\":true}" "$URL/v1/completions" >"$WORK/stream.out" || true
check "a stream past --request-timeout ends with an error event" "$(grep -c '^data: {"error".*request_timeout' "$WORK/stream.out")" = 1
check "... then [DONE]" "$(tail -n 2 "$WORK/stream.out" | grep -c '^data: \[DONE\]')" = 1
# Waits for an idle engine with no timing bound (a slow host only waits longer); the abort
# counter tells a cancelled request from one that ran out its 4000 tokens.
two_aborted() { [[ "$(metric pagedserve_requests_aborted_total)" == 2 ]]; }
wait_until 60 two_aborted || true
wait_until 60 engine_counts_are 0 0 || true
check "timed-out requests leave the engine idle" "$(metric pagedserve_num_requests_running)" = 0
check "timed-out requests were cancelled in the engine" "$(metric pagedserve_requests_aborted_total)" = 2
check "short requests still fit under the timeout" \
  "$(status "${J[@]}" -d '{"prompt":"hi","max_tokens":2}' "$URL/v1/completions")" = 200

# CORS: off by default (no Access-Control-Allow-Origin at all), preflight answered without a key.
curl -s -o /dev/null -D "$WORK/h0" -X OPTIONS -H 'Origin: http://ok.example' \
  -H 'Access-Control-Request-Method: POST' "$URL/v1/completions"
check "CORS off by default: preflight carries no Allow-Origin" "$(grep -ci '^access-control-allow-origin' "$WORK/h0")" = 0
curl -s -o /dev/null -D "$WORK/h1" -H 'Origin: http://ok.example' "$URL/v1/models"
check "CORS off by default: GET carries no Allow-Origin" "$(grep -ci '^access-control-allow-origin' "$WORK/h1")" = 0
stop_server "$SERVER_PID" TERM 30

start_server cors --api-key k2 --allowed-origins 'http://ok.example,http://two.example:3000'
pre=$(curl -s -o /dev/null -w '%{http_code}' -D "$WORK/h2" -X OPTIONS -H 'Origin: http://two.example:3000' \
  -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: authorization,content-type' \
  "$URL/v1/chat/completions")
check "preflight from a listed origin is 204 without a key" "$pre" = 204
check "... allows that origin" "$(grep -ci '^access-control-allow-origin: http://two.example:3000' "$WORK/h2")" = 1
check "... allows POST" "$(grep -ci '^access-control-allow-methods:.*POST' "$WORK/h2")" = 1
check "... allows the Authorization header" "$(grep -ci '^access-control-allow-headers:.*authorization' "$WORK/h2")" = 1
curl -s -o /dev/null -D "$WORK/h3" -X OPTIONS -H 'Origin: http://evil.example' "$URL/v1/chat/completions"
check "preflight from another origin: no Allow-Origin" "$(grep -ci '^access-control-allow-origin' "$WORK/h3")" = 0
curl -s -o /dev/null -D "$WORK/h4" -H 'Origin: http://ok.example' "$URL/v1/models"
check "a 401 to a listed origin still carries Allow-Origin (the page can read it)" \
  "$(grep -ci '^access-control-allow-origin: http://ok.example' "$WORK/h4")" = 1
curl -s -o /dev/null -D "$WORK/h5" -H 'Origin: http://ok.example' -H 'Authorization: Bearer k2' "$URL/v1/models"
check "a served GET to a listed origin carries Allow-Origin" "$(grep -ci '^access-control-allow-origin: http://ok.example' "$WORK/h5")" = 1
check "/health stays open without --metrics-require-key" "$(status "$URL/health")" = 200
stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0 (cors)" "$STOP_RC" = 0

# Draining: SIGTERM while a short request runs; it finishes whole within --shutdown-timeout.
start_server drain --shutdown-timeout 60
curl -s --max-time 120 "${J[@]}" -d '{"prompt":"Count:","max_tokens":200,"ignore_eos":true,"temperature":0}' \
  "$URL/v1/completions" >"$WORK/drain.json" &
curl_pid=$!
for _ in $(seq 1 100); do
  [[ "$(metric pagedserve_num_requests_running)" == 1 ]] && break
  sleep 0.05
done
stop_server "$SERVER_PID" TERM 90
check "SIGTERM with a request running exits 0 after draining" "$STOP_RC" = 0
wait "$curl_pid" || true
check "the running request finished whole during the drain" \
  "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["choices"][0]["finish_reason"], d["usage"]["completion_tokens"])' "$WORK/drain.json" 2>&1)" = "length 200"
finish
