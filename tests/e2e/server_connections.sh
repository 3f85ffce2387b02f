#!/usr/bin/env bash
# Client disconnects cancel requests (watched on /metrics), keep-alive connections stay usable
# after a streamed response, and a lone UTF-8 continuation byte token never fails a request.
source "$(dirname "$0")/lib/server.bash" "$@"
need_node_modules

start_server connections
if node "$ROOT/tests/js/server_connections.mjs" "$URL" "$MODEL"; then
  pass "connection checks"
else
  fail "connection checks"
fi

# curl's own connection reuse: a streamed response, then a second request on the same socket.
body='{"prompt":"hi","max_tokens":3,"temperature":0,"stream":true}'
curl -sv -N --max-time 60 -H 'Content-Type: application/json' -d "$body" "$URL/v1/completions" \
  --next -s -H 'Content-Type: application/json' -d '{"prompt":"hi","max_tokens":3}' \
  "$URL/v1/completions" >"$WORK/curl-reuse.out" 2>"$WORK/curl-reuse.err" || true
check "curl: second request reused the connection" \
  "$(grep -c -i 're-using existing connection' "$WORK/curl-reuse.err")" -ge 1
check "curl: streamed response ended with [DONE]" "$(grep -c '^data: \[DONE\]' "$WORK/curl-reuse.out")" = 1
check "curl: then a JSON completion" "$(grep -c '^{"choices":.*"object":"text_completion"' "$WORK/curl-reuse.out")" = 1

stop_server "$SERVER_PID" TERM 30
check "SIGTERM exits 0" "$STOP_RC" = 0
finish
